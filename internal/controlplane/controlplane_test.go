package controlplane_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
	"github.com/dnsplane/dnsplane/internal/testkit"
)

// recorder notes the order components start and stop in.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) add(e string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

type fakeComponent struct {
	name string
	rec  *recorder
}

func (c *fakeComponent) Name() string { return c.name }
func (c *fakeComponent) Start(context.Context) error {
	c.rec.add("start " + c.name)
	return nil
}
func (c *fakeComponent) Run(ctx context.Context) error {
	<-ctx.Done()
	c.rec.add("stop " + c.name)
	return nil
}

type fakeRole struct {
	rec   *recorder
	names []string
}

func (fakeRole) Validate() error { return nil }
func (r fakeRole) Components(cl controlplane.Cluster) ([]controlplane.Component, error) {
	if cl.Kubeconfig == "" || !strings.HasPrefix(cl.URL, "https://") {
		return nil, errors.New("no API server yet")
	}
	var out []controlplane.Component
	for _, n := range r.names {
		out = append(out, &fakeComponent{name: n, rec: r.rec})
	}
	return out, nil
}

// TestBootstrapAndOrder: a new cluster has its system namespaces and the
// kubernetes Service; components start in order once the API server
// serves and stop in reverse.
func TestBootstrapAndOrder(t *testing.T) {
	rec := &recorder{}
	ts := controlplanetest.StartTestServer(t, controlplane.Config{Roles: []controlplane.Role{fakeRole{rec: rec, names: []string{"a", "b", "c"}}}})
	ctx := context.Background()
	// Listed here rather than taken from SystemNamespaces, so that a
	// namespace dropped from the bootstrap fails the test: kube-apiserver
	// creates the first four itself (kube-node-lease by its
	// systemnamespaces controller), dnsplane-system is ours.
	for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease", "dnsplane-system"} {
		got, err := ts.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("namespace %s: %v", ns, err)
		}
		if got.Status.Phase != corev1.NamespaceActive {
			t.Errorf("namespace %s phase %q", ns, got.Status.Phase)
		}
	}
	svc, err := ts.Client.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(ts.URL, "https://"))
	if svc.Spec.ClusterIP != "10.96.0.1" || svc.Spec.Ports[0].Port != 443 || strconv.Itoa(svc.Spec.Ports[0].TargetPort.IntValue()) != port {
		t.Errorf("kubernetes service: %+v", svc.Spec)
	}
	if want := "dnsplane API server at " + ts.URL + "\nkubeconfig: " + ts.Kubeconfig + "\n\nTry:\n  export KUBECONFIG=" + ts.Kubeconfig +
		"\n  kubectl get namespaces\n"; ts.Banner() != want {
		t.Errorf("banner %q, want %q", ts.Banner(), want)
	}
	running := func() (names []string) {
		for _, c := range ts.ComponentStatuses() {
			if c.Running {
				names = append(names, c.Name)
			}
		}
		return names
	}
	// What `dnsplane status` reads through the control socket.
	if got := running(); len(got) < 4 || got[0] != "apiserver" || !slices.Equal(got[len(got)-3:], []string{"a", "b", "c"}) {
		t.Errorf("running components %q, want apiserver first, a, b, c last", got)
	}
	if err := ts.Stop(); err != nil {
		t.Fatal(err)
	}
	if got := running(); len(got) != 0 {
		t.Errorf("running after Stop: %q", got)
	}
	want := []string{"start a", "start b", "start c", "stop c", "stop b", "stop a"}
	if !slices.Equal(rec.events, want) {
		t.Errorf("events %q, want %q", rec.events, want)
	}
}

// failingComponent fails after start: the control plane stops.
type failingComponent struct{}

func (failingComponent) Name() string              { return "failing" }
func (failingComponent) Run(context.Context) error { return errors.New("boom") }
func (failingComponent) Validate() error           { return nil }
func (f failingComponent) Components(controlplane.Cluster) ([]controlplane.Component, error) {
	return []controlplane.Component{f}, nil
}

func TestComponentFailureStops(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := controlplane.Run(ctx, controlplane.Config{DataDir: t.TempDir(), Roles: []controlplane.Role{failingComponent{}}}, nil)
	if err == nil || err.Error() != "failing: boom" {
		t.Fatalf("Run: %v; want failing: boom", err)
	}
}

// TestStartRefusesEarly: bad config, a port in use and a foreign
// kubeconfig fail before etcd writes anything into the data dir.
func TestStartRefusesEarly(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	takenPort := taken.Addr().(*net.TCPAddr).Port
	foreign := `apiVersion: v1
kind: Config
clusters:
- name: kind-kind
  cluster: {server: "https://127.0.0.1:1"}
contexts:
- name: kind-kind
  context: {cluster: kind-kind, user: kind-kind}
current-context: kind-kind
users:
- name: kind-kind
  user: {token: secret}
`
	tests := []struct {
		name     string
		port     int
		kubecfg  string
		want     string
		isConfig bool
	}{
		{"port out of range", 70000, "", "--secure-port 70000: want a port number, 0-65535 (0 picks a free one)", true},
		{"port in use", takenPort, "", "--secure-port " + strconv.Itoa(takenPort) + ": 127.0.0.1:" + strconv.Itoa(takenPort) +
			" is already in use by another process (" + testkit.Self() + "); choose another port with --secure-port (0 picks a free one)", false},
		{"foreign kubeconfig", 0, foreign, `kubeconfig was not written by dnsplane (its current context is "kind-kind"), and dnsplane does not overwrite it: move it away or choose another --data-dir`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			if tt.kubecfg != "" {
				if err := os.MkdirAll(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "kubeconfig"), []byte(tt.kubecfg), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_, err := controlplane.Start(context.Background(), controlplane.Config{DataDir: dir, SecurePort: tt.port})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Start: %v; want %q", err, tt.want)
			}
			if _, ok := errors.AsType[*controlplane.ConfigError](err); ok != tt.isConfig {
				t.Errorf("ConfigError %v, want %v", ok, tt.isConfig)
			}
			if _, err := os.Stat(filepath.Join(dir, "etcd")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("etcd dir: %v; want none", err)
			}
			if tt.kubecfg != "" {
				if got, _ := os.ReadFile(filepath.Join(dir, "kubeconfig")); string(got) != tt.kubecfg {
					t.Errorf("kubeconfig changed:\n%s", got)
				}
			}
		})
	}
}

// TestDataDirMode: the data dir is created 0700.
func TestDataDirMode(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "data")
	controlplanetest.StartTestServer(t, controlplane.Config{DataDir: dir})
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("data dir mode %v, want 0700", fi.Mode().Perm())
	}
}
