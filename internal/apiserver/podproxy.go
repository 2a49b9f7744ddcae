package apiserver

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/proxy"
	translator "k8s.io/apiserver/pkg/util/proxy"
	"k8s.io/streaming/pkg/httpstream/wsstream"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/storage"
)

// The pods subresources that kube-apiserver proxies to the node's kubelet
// (pkg/registry/core/pod/rest/subresources.go). dnsplane's node agent
// serves exec only (internal/podserver): it runs no containers, so there
// is nothing to attach to and no log.

// noContainersLog is the answer to pods/log, what `kubectl logs` prints.
func noContainersLog(ns, name string) string {
	return fmt.Sprintf("dnsplane runs no containers: pod %s/%s has no logs; use `dnsplane exec` or `kubectl exec` to run a command with the pod's DNS files", ns, name)
}

// noContainersAttach is the answer to pods/attach.
func noContainersAttach(ns, name string) string {
	return fmt.Sprintf("dnsplane runs no containers: pod %s/%s has no process to attach to; use `dnsplane exec` or `kubectl exec` to run a command with the pod's DNS files", ns, name)
}

// podLog answers GET …/pods/NAME/log.
func (s *Server) podLog(w http.ResponseWriter, r *http.Request, res *Resource, info requestInfo) error {
	if info.Verb != "get" {
		return errMethodNotAllowed(r.Method, schema.GroupResource{Resource: "pods/log"})
	}
	if _, err := s.readPod(r, res, info); err != nil {
		return err
	}
	return apierrors.NewBadRequest(noContainersLog(info.Namespace, info.Name))
}

// podAttach answers …/pods/NAME/attach.
func (s *Server) podAttach(w http.ResponseWriter, r *http.Request, res *Resource, info requestInfo) error {
	if info.Verb != "get" && info.Verb != "create" {
		return errMethodNotAllowed(r.Method, schema.GroupResource{Resource: "pods/attach"})
	}
	if _, err := s.readPod(r, res, info); err != nil {
		return err
	}
	return apierrors.NewBadRequest(noContainersAttach(info.Namespace, info.Name))
}

func (s *Server) readPod(r *http.Request, res *Resource, info requestInfo) (*dpcorev1.Pod, error) {
	kv, err := s.store.Get(r.Context(), storageKey(res, info.Namespace, info.Name))
	if err != nil {
		return nil, storageError(res, info.Name, err)
	}
	obj, err := decodeStored(res, kv)
	if err != nil {
		return nil, err
	}
	return obj.(*dpcorev1.Pod), nil
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

// podExec answers GET and POST …/pods/NAME/exec: upstream's ExecREST,
// proxying the upgraded connection to the node agent's /exec. kubectl's
// WebSocket v5 is translated to SPDY here, as kube-apiserver does for
// kubelets (TranslateStreamCloseWebsocketRequests).
func (s *Server) podExec(w http.ResponseWriter, r *http.Request, res *Resource, info requestInfo) error {
	if info.Verb != "get" && info.Verb != "create" {
		return errMethodNotAllowed(r.Method, schema.GroupResource{Resource: "pods/exec"})
	}
	opts, err := parseExecOptions(r.URL.Query())
	if err != nil {
		return err
	}
	pod, err := s.readPod(r, res, info)
	if err != nil {
		return err
	}
	container, err := execContainer(pod, opts.container)
	if err != nil {
		return err
	}
	if pod.Spec.NodeName == "" {
		return apierrors.NewBadRequest(fmt.Sprintf("pod %s does not have a host assigned", pod.Name))
	}
	host, err := s.agentAddress(r, pod)
	if err != nil {
		return err
	}
	if s.cfg.KubeletTLS == nil {
		return apierrors.NewServiceUnavailable("this API server has no client certificate for node agents, so it cannot reach them")
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
	transport := &http.Transport{TLSClientConfig: s.cfg.KubeletTLS.Clone(), Proxy: nil}
	var h http.Handler = proxy.NewUpgradeAwareHandler(loc, transport, false, true, &agentErrorResponder{s: s, host: host, node: pod.Spec.NodeName})
	h = translator.NewTranslatingHandler(h,
		translator.NewStreamTranslatorHandler(loc, transport, 0, translator.Options{Stdin: opts.stdin, Stdout: opts.stdout, Stderr: opts.stderr, Tty: opts.tty}),
		wsstream.IsWebSocketRequestWithStreamCloseProtocol)
	s.log.Info("exec", "namespace", pod.Namespace, "pod", pod.Name, "container", container, "node", pod.Spec.NodeName, "agent", host)
	h.ServeHTTP(w, r)
	return nil
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
func (s *Server) agentAddress(r *http.Request, pod *dpcorev1.Pod) (string, error) {
	nodes, _ := s.reg.Lookup(schema.GroupVersionResource{Version: "v1", Resource: "nodes"})
	kv, err := s.store.Get(r.Context(), storageKey(nodes, "", pod.Spec.NodeName))
	if err != nil {
		if isNotFound(err) {
			return "", apierrors.NewServiceUnavailable(fmt.Sprintf("node %q of pod %s/%s is not registered: is its dnsplane agent running?", pod.Spec.NodeName, pod.Namespace, pod.Name))
		}
		return "", storageError(nodes, pod.Spec.NodeName, err)
	}
	obj, err := decodeStored(nodes, kv)
	if err != nil {
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

func isNotFound(err error) bool { return errors.Is(err, storage.ErrNotFound) }

// agentErrorResponder answers a failed proxy attempt: the agent cannot be
// dialed or refused the upgrade in a way the proxy could not pass on.
type agentErrorResponder struct {
	s    *Server
	host string
	node string
}

func (e *agentErrorResponder) Error(w http.ResponseWriter, _ *http.Request, err error) {
	writeError(w, e.s.log, apierrors.NewServiceUnavailable(fmt.Sprintf("error dialing the dnsplane agent of node %q at %s: %v", e.node, e.host, err)))
}
