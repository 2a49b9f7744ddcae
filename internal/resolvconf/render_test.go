package resolvconf

import (
	"bytes"
	"testing"

	corev1 "k8s.io/api/core/v1"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

func TestRender(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		c    Config
		want string
	}{
		{"empty", Config{}, ""},
		{"line order", Config{Options: []string{"ndots:5", "rotate"}, Nameservers: []string{"10.0.0.10", "10.0.0.11"}, Searches: []string{"a.example", "b.example"}},
			"search a.example b.example\nnameserver 10.0.0.10\nnameserver 10.0.0.11\noptions ndots:5 rotate\n"},
		{"nameservers only", Config{Nameservers: []string{"::1"}}, "nameserver ::1\n"},
		{"search dot", Config{Nameservers: []string{"127.0.0.1"}, Searches: []string{"."}}, "search .\nnameserver 127.0.0.1\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := string(tt.c.Render()); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRenderNameserverFirst(t *testing.T) {
	t.Parallel()
	c := Config{Options: []string{"ndots:2"}, Nameservers: []string{"10.240.0.10", "10.0.0.11"}, Searches: []string{"a", "b"}}
	want := "nameserver 10.240.0.10\nnameserver 10.0.0.11\nsearch a b\noptions ndots:2\n"
	if got := string(c.RenderOrder(NameserverFirst)); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := string(c.RenderOrder(RuntimeOrder)); got != string(c.Render()) {
		t.Errorf("RuntimeOrder %q differs from Render %q", got, c.Render())
	}
}

// TestRenderCustomExample is the file docs/resolvconf.md shows for
// examples/custom-pod.yaml.
func TestRenderCustomExample(t *testing.T) {
	t.Parallel()
	node := Node{
		ClusterDomain:  "cluster.local",
		ClusterDNS:     []string{"10.240.0.10"},
		Host:           mustParse(t, "nameserver 1.2.3.4\nsearch foo.com bar.com\noptions ndots:1\n"),
		HostResolvConf: true,
	}
	pod := newPod("ns1", dpcorev1.DNSCustom, withCustom([]string{"$(NAMESPACE).svc.$(CLUSTER)", "my.dns.search.suffix", "$(HOST)"}, []string{"ndots:2"}))
	c, w, err := ForPod(pod, node)
	if err != nil || len(w) != 0 {
		t.Fatalf("err = %v, warnings = %v", err, w)
	}
	const want = "search ns1.svc.cluster.local my.dns.search.suffix foo.com bar.com\nnameserver 10.240.0.10\noptions ndots:2\n"
	if got := string(c.Render()); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestRenderDeterministic: the agent rewrites a pod's file only when its
// bytes change, so the same inputs must always give the same bytes.
func TestRenderDeterministic(t *testing.T) {
	t.Parallel()
	node := Node{ClusterDomain: "cluster.local", ClusterDNS: []string{"10.0.0.10"}, HostResolvConf: true,
		Host: mustParse(t, "search a.example\noptions rotate timeout:1\noptions attempts:2 timeout:3\n")}
	var opts []corev1.PodDNSConfigOption
	for _, n := range []string{"z", "y", "x", "w", "v", "u", "ndots", "attempts", "timeout"} {
		opts = append(opts, corev1.PodDNSConfigOption{Name: n, Value: ptr("1")})
	}
	pod := newPod("ns1", corev1.DNSDefault, withDNSConfig(&corev1.PodDNSConfig{Options: opts}))
	first, _, err := ForPod(pod, node)
	if err != nil {
		t.Fatal(err)
	}
	want := "search a.example\noptions rotate timeout:1 attempts:1 z:1 y:1 x:1 w:1 v:1 u:1 ndots:1\n"
	if got := string(first.Render()); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := 0; i < 50; i++ {
		c, _, _ := ForPod(pod, node)
		if !bytes.Equal(c.Render(), first.Render()) {
			t.Fatalf("run %d rendered %q, first %q", i, c.Render(), first.Render())
		}
	}
}
