package statuscheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/miekg/dns"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/upctl"
)

// Ready is a health endpoint of the API server (/readyz, /readyz/etcd),
// read with the admin's credentials: 200 is healthy, anything else is
// reported with the checks the body says failed.
type Ready struct {
	Label  string
	URL    string
	Client *http.Client
}

// Name implements Check.
func (r Ready) Name() string { return r.Label }

// Check implements Check.
func (r Ready) Check(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.URL, nil)
	if err != nil {
		return "", err
	}
	resp, err := r.Client.Do(req)
	if err != nil {
		return "", err // names the method and URL
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<10))
	if resp.StatusCode == http.StatusOK {
		return "ok", nil
	}
	// kube's verbose failure lists one "[-]check failed" line per failing
	// check; a single check answers "internal server error: why".
	var failed []string
	for line := range strings.Lines(string(body)) {
		if strings.HasPrefix(line, "[-]") {
			failed = append(failed, strings.TrimSpace(strings.TrimPrefix(line, "[-]")))
		}
	}
	why := strings.Join(failed, ", ")
	if why == "" {
		why = string(body)
	}
	return "", fmt.Errorf("GET %s: %s: %s", r.URL, resp.Status, oneLine(why))
}

// Running checks that an in-process component of `up` (controllers,
// scheduler, DNS operator) runs, as the control socket's /components
// lists it.
type Running struct {
	Label string
	// Components is the list read from the control socket; nil when the
	// socket did not answer (ListErr).
	Components []upctl.ComponentStatus
	ListErr    error
}

// Name implements Check.
func (c Running) Name() string { return c.Label }

// Check implements Check.
func (c Running) Check(context.Context) (string, error) {
	if c.ListErr != nil {
		return "", fmt.Errorf("unknown: %w", c.ListErr)
	}
	for _, s := range c.Components {
		if s.Name != c.Label {
			continue
		}
		if !s.Running {
			if s.Error != "" {
				return "", fmt.Errorf("not running: %s (the log of dnsplane up has more)", s.Error)
			}
			return "", errors.New("not running: dnsplane up is stopping")
		}
		return "running", nil
	}
	return "", fmt.Errorf("not running: dnsplane up runs no %s", c.Label)
}

// Operator is the DNS operator: its component, and the DNS resource's
// conditions, which say when the cluster DNS runs without part of its
// configuration (Degraded) or does not answer (Available).
type Operator struct {
	Running
	// DNS reads the DNS resource "default".
	DNS func(ctx context.Context) (*operatorv1.DNS, error)
}

// Check implements Check.
func (o Operator) Check(ctx context.Context) (string, error) {
	msg, err := o.Running.Check(ctx)
	if err != nil {
		return "", err
	}
	d, err := o.DNS(ctx)
	if err != nil {
		return "", fmt.Errorf("running, but reading the DNS resource: %w", err)
	}
	conds := d.Status.Conditions
	if c := meta.FindStatusCondition(conds, operatorv1.DNSDegraded); c != nil && c.Status == metav1.ConditionTrue {
		return "", fmt.Errorf("DNS default is Degraded (%s): %s; see kubectl get dns default -o yaml", c.Reason, oneLine(c.Message))
	}
	if c := meta.FindStatusCondition(conds, operatorv1.DNSAvailable); c != nil && c.Status == metav1.ConditionFalse {
		return "", fmt.Errorf("DNS default is not Available (%s): %s", c.Reason, oneLine(c.Message))
	}
	return msg + ", DNS default not degraded", nil
}

// DNSQuery asks a DNS server of `up` one question over UDP, as a pod's
// resolver would: healthy when it answers NOERROR with an answer.
type DNSQuery struct {
	Label string
	Addr  string // ADDR:PORT
	QName string // fully qualified
	QType uint16
	// StoppedErr, when not nil, is reported instead of asking: the node
	// is stopped and so is its cache.
	StoppedErr error
}

// Name implements Check.
func (q DNSQuery) Name() string { return q.Label }

// Check implements Check.
func (q DNSQuery) Check(ctx context.Context) (string, error) {
	if q.StoppedErr != nil {
		return "", q.StoppedErr
	}
	m := new(dns.Msg)
	m.SetQuestion(q.QName, q.QType)
	c := &dns.Client{Net: "udp"}
	if dl, ok := ctx.Deadline(); ok {
		c.Timeout = time.Until(dl)
	}
	qs := fmt.Sprintf("%s %s", q.QName, dns.TypeToString[q.QType])
	r, rtt, err := c.ExchangeContext(ctx, m, q.Addr)
	if err != nil {
		return "", fmt.Errorf("%s @%s: %w", qs, q.Addr, err)
	}
	if r.Rcode != dns.RcodeSuccess || len(r.Answer) == 0 {
		return "", fmt.Errorf("%s @%s: %s with %d answers, want NOERROR with an answer", qs, q.Addr, dns.RcodeToString[r.Rcode], len(r.Answer))
	}
	return fmt.Sprintf("%s answers %s in %s", q.Addr, qs, rtt.Round(100*time.Microsecond)), nil
}

// NodeReader reads what the agent of a node keeps up to date, as
// client-go's typed clients do.
type NodeReader interface {
	Node(ctx context.Context, name string) (*corev1.Node, error)
	Lease(ctx context.Context, name string) (*coordinationv1.Lease, error)
}

// Agent is a node's agent: its Node Ready and its Lease renewed within
// its duration, as the node lifecycle controller judges kubelets.
type Agent struct {
	Node       string
	Reader     NodeReader
	StoppedErr error
	Now        func() time.Time
}

// Name implements Check.
func (a Agent) Name() string { return "agent/" + a.Node }

// Check implements Check.
func (a Agent) Check(ctx context.Context) (string, error) {
	if a.StoppedErr != nil {
		return "", a.StoppedErr
	}
	n, err := a.Reader.Node(ctx, a.Node)
	if err != nil {
		return "", fmt.Errorf("node %s: %w", a.Node, err)
	}
	var ready *corev1.NodeCondition
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == corev1.NodeReady {
			ready = &n.Status.Conditions[i]
		}
	}
	if ready == nil {
		return "", fmt.Errorf("node %s has no Ready condition yet", a.Node)
	}
	if ready.Status != corev1.ConditionTrue {
		return "", fmt.Errorf("node %s Ready=%s (%s): %s", a.Node, ready.Status, ready.Reason, oneLine(ready.Message))
	}
	l, err := a.Reader.Lease(ctx, a.Node)
	if err != nil {
		return "", fmt.Errorf("lease kube-node-lease/%s: %w", a.Node, err)
	}
	if l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return "", fmt.Errorf("lease kube-node-lease/%s was never renewed", a.Node)
	}
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	age := now().Sub(l.Spec.RenewTime.Time).Round(time.Second)
	if limit := time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second; age > limit {
		return "", fmt.Errorf("node %s Ready, but its lease was last renewed %s ago (it lasts %s): is its agent stuck? the log of dnsplane up has more", a.Node, age, limit)
	}
	return fmt.Sprintf("Ready, lease renewed %s ago", age), nil
}
