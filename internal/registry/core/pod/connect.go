package pod

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/proxy"
	translator "k8s.io/apiserver/pkg/util/proxy"
	"k8s.io/streaming/pkg/httpstream/wsstream"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/agentdial"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
)

// The pods subresources that kube-apiserver proxies to the node's kubelet
// (pkg/registry/core/pod/rest/subresources.go). dnsplane's node agent
// serves exec only (internal/podserver): it runs no containers, so there
// is nothing to attach to and no log.

// Agents is how the API server reaches node agents for pods/exec, as
// kube-apiserver's KubeletClientConfig is for kubelets.
type Agents struct {
	// TLS is the API server's client certificate (pki.EnsureKubeletClient)
	// and the CA that signs the agents' serving certificates; nil makes
	// pods/exec answer 503.
	TLS *tls.Config
	// Logger records each exec; nil logs nothing.
	Logger *slog.Logger
	// Dial says which endpoints may be dialed as a node's agent, checked
	// before the request is proxied and again on the address connected
	// to (a Hostname address resolves at dial time); nil =
	// agentdial.Rules{}: no special addresses, port 10250 only.
	Dial DialPolicy
	// Sessions counts each exec session against the API server's
	// connection limit while it lasts; nil = unlimited.
	Sessions SessionLimiter
}

// SessionLimiter admits a session (release ends it) or says why not, as a
// kube API error.
type SessionLimiter interface {
	Acquire() (release func(), err error)
}

// DialPolicy says why an endpoint may not be dialed as node's agent, or
// nil (internal/agentdial).
type DialPolicy interface {
	Allow(node string, ap netip.AddrPort) error
}

// dialer is a net.Dialer that connects only where policy allows for node,
// on the address actually connected to.
func dialer(policy DialPolicy, node string) *net.Dialer {
	return &net.Dialer{
		Timeout: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("dialing %s: %w", address, err)
			}
			return policy.Allow(node, ap)
		},
	}
}

var nodesResource = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}

// noContainersLog is the answer to pods/log, what `kubectl logs` prints.
func noContainersLog(ns, name string) string {
	return fmt.Sprintf("dnsplane runs no containers: pod %s/%s has no logs; use `dnsplane exec` or `kubectl exec` to run a command with the pod's DNS files", ns, name)
}

// noContainersAttach is the answer to pods/attach.
func noContainersAttach(ns, name string) string {
	return fmt.Sprintf("dnsplane runs no containers: pod %s/%s has no process to attach to; use `dnsplane exec` or `kubectl exec` to run a command with the pod's DNS files", ns, name)
}

// logSubresource is pods/log: the pod must exist; there is no log.
func logSubresource() rest.Subresource {
	return rest.Subresource{
		Name: "log", Kind: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Verbs: []string{"get"},
		Serve: func(ctx context.Context, objs rest.Objects, req rest.Request) (rest.Response, error) {
			if _, err := objs.Get(ctx, Resource, req.Namespace, req.Name); err != nil {
				return rest.Response{}, err
			}
			return rest.Response{}, apierrors.NewBadRequest(noContainersLog(req.Namespace, req.Name))
		},
	}
}

// attach is pods/attach: the pod must exist; there is no process.
func attach() rest.Subresource {
	return rest.Subresource{
		Name: "attach", Kind: schema.GroupVersionKind{Version: "v1", Kind: "PodAttachOptions"}, Verbs: []string{"create", "get"},
		Serve: func(ctx context.Context, objs rest.Objects, req rest.Request) (rest.Response, error) {
			if _, err := objs.Get(ctx, Resource, req.Namespace, req.Name); err != nil {
				return rest.Response{}, err
			}
			return rest.Response{}, apierrors.NewBadRequest(noContainersAttach(req.Namespace, req.Name))
		},
	}
}

// execOptions is core/v1 PodExecOptions as its query parameters carry it.
type execOptions struct {
	stdin, stdout, stderr, tty bool
	container                  string
	command                    []string
}

func parseExecOptions(q url.Values) (execOptions, error) {
	var o execOptions
	for name, dst := range map[string]*bool{"stdin": &o.stdin, "stdout": &o.stdout, "stderr": &o.stderr, "tty": &o.tty} {
		v := q.Get(name)
		if v == "" {
			continue
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return o, apierrors.NewBadRequest(fmt.Sprintf("%s: %q is not a boolean", name, v))
		}
		*dst = b
	}
	o.container, o.command = q.Get("container"), q["command"]
	// Upstream's ValidatePodExecOptions words.
	if len(o.command) == 0 {
		return o, apierrors.NewBadRequest("you must specify at least one command for the container")
	}
	if o.tty && o.stderr {
		// kube's conversion drops stderr with a tty (kubelet does too)
		// before validation counts the streams (FuzzParseExecOptions).
		o.stderr = false
	}
	if !o.stdin && !o.stdout && !o.stderr {
		return o, apierrors.NewBadRequest("you must specify at least 1 of stdin, stdout, stderr")
	}
	return o, nil
}

// exec is pods/exec, upstream's ExecREST: the upgraded connection is
// proxied to the node agent's /exec. kubectl's WebSocket v5 is translated
// to SPDY here, as kube-apiserver does for kubelets
// (TranslateStreamCloseWebsocketRequests).
func exec(agents Agents) rest.Subresource {
	log := agents.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	policy := agents.Dial
	if policy == nil {
		policy = agentdial.Rules{}
	}
	return rest.Subresource{
		Name: "exec", Kind: schema.GroupVersionKind{Version: "v1", Kind: "PodExecOptions"}, Verbs: []string{"create", "get"},
		Serve: func(ctx context.Context, objs rest.Objects, req rest.Request) (rest.Response, error) {
			opts, err := parseExecOptions(req.HTTP.URL.Query())
			if err != nil {
				return rest.Response{}, err
			}
			obj, err := objs.Get(ctx, Resource, req.Namespace, req.Name)
			if err != nil {
				return rest.Response{}, err
			}
			pod := obj.(*dpcorev1.Pod)
			container, err := execContainer(pod, opts.container)
			if err != nil {
				return rest.Response{}, err
			}
			if pod.Spec.NodeName == "" {
				return rest.Response{}, apierrors.NewBadRequest(fmt.Sprintf("pod %s does not have a host assigned", pod.Name))
			}
			host, err := agentAddress(ctx, objs, pod)
			if err != nil {
				return rest.Response{}, err
			}
			if agents.TLS == nil {
				return rest.Response{}, apierrors.NewServiceUnavailable("this API server has no client certificate for node agents, so it cannot reach them")
			}
			// Refused before anything is dialed, so the answer says
			// nothing of the port's state (issue 22 item 4).
			if ap, err := netip.ParseAddrPort(host); err == nil {
				if err := policy.Allow(pod.Spec.NodeName, ap); err != nil {
					log.Warn("exec: agent endpoint refused", "namespace", pod.Namespace, "pod", pod.Name, "node", pod.Spec.NodeName, "agent", host, "err", err)
					return rest.Response{}, apierrors.NewServiceUnavailable(err.Error())
				}
			}
			params := url.Values{}
			for _, p := range []struct {
				on   bool
				name string
			}{{opts.stdin, "input"}, {opts.stdout, "output"}, {opts.stderr, "error"}, {opts.tty, "tty"}} {
				if p.on {
					params.Set(p.name, "1")
				}
			}
			params["command"] = opts.command
			loc := &url.URL{
				Scheme:   "https",
				Host:     host,
				Path:     fmt.Sprintf("/exec/%s/%s/%s", pod.Namespace, pod.Name, container),
				RawQuery: params.Encode(),
			}
			transport := &http.Transport{TLSClientConfig: agents.TLS.Clone(), Proxy: nil, DialContext: dialer(policy, pod.Spec.NodeName).DialContext}
			var h http.Handler = proxy.NewUpgradeAwareHandler(loc, transport, false, true, &agentErrorResponder{host: host, node: pod.Spec.NodeName, log: log})
			h = translator.NewTranslatingHandler(h,
				translator.NewStreamTranslatorHandler(loc, transport, 0, translator.Options{Stdin: opts.stdin, Stdout: opts.stdout, Stderr: opts.stderr, Tty: opts.tty}),
				wsstream.IsWebSocketRequestWithStreamCloseProtocol)
			release := func() {}
			if agents.Sessions != nil {
				if release, err = agents.Sessions.Acquire(); err != nil {
					log.Warn("exec refused", "namespace", pod.Namespace, "pod", pod.Name, "err", err)
					return rest.Response{}, err
				}
			}
			log.Info("exec", "namespace", pod.Namespace, "pod", pod.Name, "container", container, "node", pod.Spec.NodeName, "agent", host)
			// The proxy returns when the session ends, either side.
			session := h
			h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				defer release()
				session.ServeHTTP(w, r)
			})
			return rest.Response{Handler: h}, nil
		},
	}
}

// execContainer is the container named, which must be the pod's, or the
// pod's first (kubectl names one itself: -c or the default container).
func execContainer(pod *dpcorev1.Pod, name string) (string, error) {
	var names []string
	for _, c := range pod.Spec.InitContainers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.EphemeralContainers {
		names = append(names, c.Name)
	}
	if name == "" {
		if len(pod.Spec.Containers) == 0 {
			return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s", pod.Name))
		}
		return pod.Spec.Containers[0].Name, nil
	}
	for _, n := range names {
		if n == name {
			return name, nil
		}
	}
	return "", apierrors.NewBadRequest(fmt.Sprintf("container %s is not valid for pod %s", name, pod.Name))
}

// agentAddress is host:port of the node agent's exec server: the node's
// InternalIP (else ExternalIP, else Hostname) and its kubelet endpoint port,
// which the agent registers.
func agentAddress(ctx context.Context, objs rest.Objects, pod *dpcorev1.Pod) (string, error) {
	obj, err := objs.Get(ctx, nodesResource, "", pod.Spec.NodeName)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return "", apierrors.NewServiceUnavailable(fmt.Sprintf("node %q of pod %s/%s is not registered: is its dnsplane agent running?", pod.Spec.NodeName, pod.Namespace, pod.Name))
		}
		return "", err
	}
	node := obj.(*corev1.Node)
	port := node.Status.DaemonEndpoints.KubeletEndpoint.Port
	var addr string
	for _, t := range []corev1.NodeAddressType{corev1.NodeInternalIP, corev1.NodeExternalIP, corev1.NodeHostName} {
		for _, a := range node.Status.Addresses {
			if a.Type == t && a.Address != "" && addr == "" {
				addr = a.Address
			}
		}
	}
	if port <= 0 || port > 65535 || addr == "" {
		return "", apierrors.NewServiceUnavailable(fmt.Sprintf("node %q of pod %s/%s has no exec endpoint (status.addresses and status.daemonEndpoints.kubeletEndpoint.port): is its dnsplane agent running?", node.Name, pod.Namespace, pod.Name))
	}
	return net.JoinHostPort(addr, strconv.Itoa(int(port))), nil
}

// agentErrorResponder answers a failed proxy attempt: the agent cannot be
// dialed or refused the upgrade in a way the proxy could not pass on.
type agentErrorResponder struct {
	host, node string
	log        *slog.Logger
}

func (e *agentErrorResponder) Error(w http.ResponseWriter, _ *http.Request, err error) {
	st := apierrors.NewServiceUnavailable(fmt.Sprintf("error dialing the dnsplane agent of node %q at %s: %v", e.node, e.host, err)).Status()
	st.Kind, st.APIVersion = "Status", "v1"
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(st.Code))
	if err := json.NewEncoder(w).Encode(st); err != nil {
		e.log.Debug("writing the exec error", "err", err)
	}
}
