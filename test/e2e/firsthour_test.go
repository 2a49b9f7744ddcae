package e2e

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var klogInfo = regexp.MustCompile(`(?m)^I\d{4} `)

// TestFirstHour is the README then the tour on one data dir, as a new
// user does it (issue 29): `up`, then `up --nodes 2` on the same
// ~/.dnsplane. The second up retires the first's node `dnsplane`, so
// `kubectl wait --for=condition=Ready node --all` returns, and the
// examples, which name no node, are scheduled onto one of the two.
func TestFirstHour(t *testing.T) {
	requireRoot(t)
	requireKubectl(t)
	dataDir := filepath.Join(t.TempDir(), "data")

	one := startUp(t, dataDir, nil, "--dns-listen", loopback53(t, 91), "--nodecache-listen", loopback53(t, 92), "--verbose=false")
	// Without -v, start-up shows its progress and warnings, then the
	// banner: no routine log line comes first.
	// klog's info lines (informers, the API server's own controllers)
	// start with I and the date.
	if log := one.stderr.String(); strings.Contains(log, "level=INFO") || strings.Contains(log, "level=DEBUG") || klogInfo.MatchString(log) {
		t.Errorf("up without -v logged routine lines before its banner:\n%s", log)
	}
	mustKubectl(t, one.Kubeconfig, "", "wait", "--for=condition=Ready", "node/dnsplane", "--timeout=60s")
	if err := one.stop(); err != nil {
		t.Fatal(err)
	}

	two := startUp(t, dataDir, nil, "--nodes", "2", "--dns-listen", loopback53(t, 91), "--nodecache-listen", consecutive53(t, 93, 2))
	mustKubectl(t, two.Kubeconfig, "", "wait", "--for=condition=Ready", "node", "--all", "--timeout=60s")
	nodes, err := clientFor(t, two.Kubeconfig).CoreV1().Nodes().List(ctxFor(t, 10*time.Second), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range nodes.Items {
		names = append(names, n.Name)
	}
	slices.Sort(names)
	if want := []string{"node-1", "node-2"}; !slices.Equal(names, want) {
		t.Errorf("nodes after up --nodes 2 on the data dir of up: %v, want %v", names, want)
	}

	ns := newNamespace(t, two.Kubeconfig)
	mustKubectl(t, two.Kubeconfig, "", "apply", "-n", ns, "-f", "../../examples/custom-pod.yaml", "-f", "../../examples/autopath-pod.yaml")
	mustKubectl(t, two.Kubeconfig, "", "wait", "-n", ns, "--for=condition=Ready", "--timeout=60s", "pod/custom-pod", "pod/autopath-pod")
	node := mustKubectl(t, two.Kubeconfig, "", "get", "pod", "custom-pod", "-n", ns, "-o", "jsonpath={.spec.nodeName}")
	if !strings.HasPrefix(node, "node-") {
		t.Errorf("custom-pod runs on %q, want one of the scheduler's node-N", node)
	}
}

// TestNodePortAllocation: a NodePort Service gets a node port from
// 30000-32767 as kube-apiserver allocates it, a second Service naming it is
// refused with kube's message, and a type change gives it back.
func TestNodePortAllocation(t *testing.T) {
	t.Parallel()
	requireKubectl(t)
	s := sharedServer(t)
	ns := newNamespace(t, s.Kubeconfig)
	mustKubectl(t, s.Kubeconfig, "", "create", "service", "nodeport", "web", "-n", ns, "--tcp=80:8080")
	got := mustKubectl(t, s.Kubeconfig, "", "get", "service", "web", "-n", ns, "-o", "jsonpath={.spec.ports[0].nodePort}")
	port, err := strconv.Atoi(got)
	if err != nil || port < 30000 || port > 32767 {
		t.Fatalf("nodePort %q, want one of 30000-32767", got)
	}
	wantKubectl(t, s.Kubeconfig, "", failed(fmt.Sprintf(`error: failed to create NodePort service: Service "other" is invalid: spec.ports[0].nodePort: Invalid value: %d: provided port is already allocated`, port)),
		"create", "service", "nodeport", "other", "-n", ns, "--tcp=80:8080", fmt.Sprintf("--node-port=%d", port))
	mustKubectl(t, s.Kubeconfig, "", "patch", "service", "web", "-n", ns, "-p", `{"spec":{"type":"ClusterIP"}}`)
	if got := mustKubectl(t, s.Kubeconfig, "", "get", "service", "web", "-n", ns, "-o", "jsonpath={.spec.ports[0].nodePort}"); got != "" {
		t.Errorf("type ClusterIP kept nodePort %s", got)
	}
	mustKubectl(t, s.Kubeconfig, "", "create", "service", "nodeport", "other", "-n", ns, "--tcp=80:8080", fmt.Sprintf("--node-port=%d", port))
}
