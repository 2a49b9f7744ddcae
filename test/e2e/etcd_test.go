package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/dnsplane/dnsplane/internal/testkit"
)

// etcdBinary is the etcd server to run, or "" when none is installed.
func etcdBinary() string {
	if path, err := exec.LookPath("etcd"); err == nil {
		return path
	}
	if _, err := os.Stat("/usr/bin/etcd"); err == nil {
		return "/usr/bin/etcd"
	}
	return ""
}

// startEtcd runs a single-member etcd on free loopback ports in a temporary
// dir until the test ends, and returns its client URL once it is healthy.
func startEtcd(t *testing.T) string {
	t.Helper()
	bin := etcdBinary()
	if bin == "" {
		t.Skip("etcd is not installed (not on PATH, no /usr/bin/etcd): the external etcd test needs an etcd server binary (Debian: etcd-server)")
	}
	clientURL := fmt.Sprintf("http://127.0.0.1:%d", testkit.FreePort(t))
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", testkit.FreePort(t))
	p, err := startProcess("etcd", bin,
		"--name", "e2e", "--data-dir", filepath.Join(t.TempDir(), "etcd"),
		"--listen-client-urls", clientURL, "--advertise-client-urls", clientURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "e2e="+peerURL, "--initial-cluster-state", "new")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("etcd log:\n%s", p.stderr.tail())
		}
	})
	client := &http.Client{Timeout: 2 * time.Second}
	eventually(t, 30*time.Second, 100*time.Millisecond, func() (bool, string) {
		if !p.running() {
			t.Fatalf("etcd exited: %v\n%s", p.err, p.stderr.tail())
		}
		resp, err := client.Get(clientURL + "/health")
		if err != nil {
			return false, fmt.Sprintf("etcd /health: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK && bytes.Contains(body, []byte(`"health":"true"`)),
			fmt.Sprintf("etcd /health: %d %s", resp.StatusCode, body)
	})
	return clientURL
}

// etcdCount counts the keys in [key, rangeEnd) (rangeEnd "" = key only)
// through etcd's JSON gateway, so the test needs no etcdctl.
func etcdCount(t *testing.T, etcdURL, key, rangeEnd string) int {
	t.Helper()
	req := map[string]any{"key": base64.StdEncoding.EncodeToString([]byte(key)), "count_only": true}
	if rangeEnd != "" {
		req["range_end"] = base64.StdEncoding.EncodeToString([]byte(rangeEnd))
	}
	body, _ := json.Marshal(req)
	resp, err := http.Post(etcdURL+"/v3/kv/range", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Count string `json:"count"`
	}
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || json.Unmarshal(data, &out) != nil {
		t.Fatalf("etcd range %q: %d %s", key, resp.StatusCode, data)
	}
	if out.Count == "" {
		return 0
	}
	n, err := strconv.Atoi(out.Count)
	if err != nil {
		t.Fatalf("etcd range %q: count %q", key, out.Count)
	}
	return n
}

// TestExternalEtcd runs two API server processes over one external etcd
// (--etcd-servers, --etcd-prefix): what one writes the other serves, watches
// see the other's writes, and concurrent Service creates through both never
// get the same cluster IP.
func TestExternalEtcd(t *testing.T) {
	requireKubectl(t)
	etcdURL := startEtcd(t)
	flags := []string{"--etcd-servers", etcdURL, "--etcd-prefix", "/dnsplane-test", "--service-cluster-ip-range", "10.96.0.0/27"}
	_, serviceRange, _ := net.ParseCIDR("10.96.0.0/27")

	a := startServer(t, t.TempDir(), flags...)
	ns := newNamespace(t, a.Kubeconfig)
	wantKubectl(t, a.Kubeconfig, podYAML("x", "1"), ok("pod/x created"), "-n", ns, "create", "-f", "-")
	// Stored under the prefix, as <prefix>/<resource>/<namespace>/<name>.
	if n := etcdCount(t, etcdURL, "/dnsplane-test/pods/"+ns+"/x", ""); n != 1 {
		t.Errorf("etcd has %d keys /dnsplane-test/pods/%s/x, want 1", n, ns)
	}
	if n := etcdCount(t, etcdURL, "/registry/", "/registry0"); n != 0 {
		t.Errorf("etcd has %d keys under the default prefix /registry/, want none", n)
	}

	// A second server, its own data dir and port, the same etcd.
	b := startServer(t, t.TempDir(), flags...)
	if a.URL == b.URL {
		t.Fatalf("both servers at %s", a.URL)
	}
	if r := rowFor(mustKubectl(t, b.Kubeconfig, "", "-n", ns, "get", "pod", "x"), "x"); len(r) != 5 || !slices.Equal(r[:4], []string{"x", "0/1", "Pending", "0"}) {
		t.Errorf("kubectl get pod x through the second server: row %q", r)
	}
	if ua, ub := jsonpath(t, a.Kubeconfig, ns, "pod", "x", "{.metadata.uid}"), jsonpath(t, b.Kubeconfig, ns, "pod", "x", "{.metadata.uid}"); ua != ub || ua == "" {
		t.Errorf("uid %q through the first server, %q through the second", ua, ub)
	}
	// A watch through the first server sees an update through the second.
	watch := startKubectlWatch(t, a.Kubeconfig, "-n", ns, "get", "pods", "-w", "--output-watch-events")
	if out, err := watch.out.waitFor(10*time.Second, watch.exited, func(s string) bool { return countRows(s, []string{"ADDED", "x"}) == 1 }); err != nil {
		t.Fatalf("kubectl get -w through the first server: %v\n%s\n%s", err, out, watch.err.String())
	}
	wantKubectl(t, b.Kubeconfig, "", ok("pod/x labeled"), "-n", ns, "label", "pod", "x", "via=b")
	if out, err := watch.out.waitFor(10*time.Second, watch.exited, func(s string) bool { return countRows(s, []string{"MODIFIED", "x"}) == 1 }); err != nil {
		t.Fatalf("the first server's watch did not see the second server's update: %v\n%s\n%s", err, out, watch.err.String())
	}
	wantLabels(t, a.Kubeconfig, ns, "pod", "x", map[string]string{"app": "e2e", "version": "1", "via": "b"})

	// Concurrent cluster IP allocation through both servers, from a range of
	// 30 addresses (10.96.0.1 is the kubernetes Service's): 20 random picks
	// among 29 free addresses would collide without the etcd transactions.
	const perServer = 10
	ctx := ctxFor(t, time.Minute)
	clients := map[string]*kubernetes.Clientset{"a": clientFor(t, a.Kubeconfig), "b": clientFor(t, b.Kubeconfig)}
	type result struct {
		name, ip string
		err      error
	}
	results := make(chan result, 2*perServer)
	var wg sync.WaitGroup
	for prefix, c := range clients {
		for i := range perServer {
			wg.Go(func() {
				name := fmt.Sprintf("%s-%d", prefix, i)
				svc, err := createService(ctx, c, ns, name)
				results <- result{name: name, ip: svc.Spec.ClusterIP, err: err}
			})
		}
	}
	wg.Wait()
	close(results)
	owner := map[string]string{"10.96.0.1": "default/kubernetes"}
	created := map[string]string{}
	check := func(r result) {
		t.Helper()
		switch ip := net.ParseIP(r.ip); {
		case r.err != nil:
			t.Errorf("create service %s: %v", r.name, r.err)
		case ip == nil || !serviceRange.Contains(ip):
			t.Errorf("service %s got cluster IP %q, not in %s", r.name, r.ip, serviceRange)
		case owner[r.ip] != "":
			t.Errorf("services %s and %s both got cluster IP %s", owner[r.ip], r.name, r.ip)
		default:
			owner[r.ip] = r.name
			created[r.name] = r.ip
		}
	}
	for r := range results {
		check(r)
	}
	// Both servers list the same 20 Services with the addresses they answered.
	for name, c := range clients {
		list, err := c.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("listing services through server %s: %v", name, err)
		}
		got := map[string]string{}
		for _, svc := range list.Items {
			got[svc.Name] = svc.Spec.ClusterIP
		}
		if !mapsEqual(got, created) {
			t.Errorf("services through server %s: %v, want %v", name, got, created)
		}
	}
	if got := jsonpath(t, b.Kubeconfig, "default", "svc", "kubernetes", "{.spec.clusterIP}"); got != "10.96.0.1" {
		t.Errorf("the kubernetes Service has cluster IP %q, want 10.96.0.1", got)
	}
	if t.Failed() {
		return
	}
	t.Logf("%d Services created concurrently through two servers: %s", len(created), strings.Join(slices.Sorted(maps.Values(created)), " "))

	// Fill the range, alternating servers; every address is an etcd key.
	for i := range 30 - 1 - 2*perServer {
		name := fmt.Sprintf("fill-%d", i)
		svc, err := createService(ctx, clients[[]string{"a", "b"}[i%2]], ns, name)
		check(result{name: name, ip: svc.Spec.ClusterIP, err: err})
	}
	if n := etcdCount(t, etcdURL, "/dnsplane-test/ranges/serviceips/", "/dnsplane-test/ranges/serviceips0"); n != 30 {
		t.Errorf("%d allocation records in etcd, want 30", n)
	}
	t.Run("range full", func(t *testing.T) {
		_, err := createService(ctx, clients["b"], ns, "full")
		var status apierrors.APIStatus
		if !errors.As(err, &status) || status.Status().Code != http.StatusInternalServerError || status.Status().Reason != metav1.StatusReasonInternalError ||
			status.Status().Message != "Internal error occurred: failed to allocate a serviceIP: range is full" {
			t.Errorf("create with the range full: %v, want 500 InternalError", err)
		}
	})
	// A full range refuses, whatever the wording; deleting through one server
	// frees the address for the other.
	if _, err := createService(ctx, clients["b"], ns, "full"); err == nil || !strings.Contains(err.Error(), "range is full") {
		t.Errorf("create with the range full: %v, want a range-is-full error", err)
	}
	freed := created["a-0"]
	if err := clients["a"].CoreV1().Services(ns).Delete(ctx, "a-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if svc, err := createService(ctx, clients["b"], ns, "reuse"); err != nil || svc.Spec.ClusterIP != freed {
		t.Errorf("create after deleting a-0 (%s): cluster IP %q, error %v; want the freed address", freed, svc.Spec.ClusterIP, err)
	}
}

// createService creates a ClusterIP Service; the returned Service is never nil.
func createService(ctx context.Context, cs *kubernetes.Clientset, ns, name string) (*corev1.Service, error) {
	svc, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}},
	}, metav1.CreateOptions{})
	if err != nil || svc == nil {
		return &corev1.Service{}, err
	}
	return svc, nil
}
