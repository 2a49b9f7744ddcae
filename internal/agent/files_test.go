package agent

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestManagedHosts(t *testing.T) {
	const local = "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n"
	for _, tc := range []struct {
		name    string
		spec    corev1.PodSpec
		aliases []corev1.HostAlias
		want    string
	}{
		{"pod name", corev1.PodSpec{}, nil, local + "10.244.0.2\tweb\n"},
		{"hostname", corev1.PodSpec{Hostname: "h"}, nil, local + "10.244.0.2\th\n"},
		{"subdomain", corev1.PodSpec{Hostname: "h", Subdomain: "sub"}, nil, local + "10.244.0.2\th.sub.ns1.svc.cluster.local\th\n"},
		{"override", corev1.PodSpec{Hostname: "h", Subdomain: "sub", HostnameOverride: ptr.To("over.example")}, nil, local + "10.244.0.2\tover.example\n"},
		{"aliases", corev1.PodSpec{}, []corev1.HostAlias{{IP: "1.2.3.4", Hostnames: []string{"a", "b"}}, {IP: "::5", Hostnames: []string{"c"}}},
			local + "10.244.0.2\tweb\n\n# Entries added by HostAliases.\n1.2.3.4\ta\tb\n::5\tc\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, d := podHostname(&tc.spec, "web", "ns1", "cluster.local")
			if got := string(managedHosts([]string{"10.244.0.2"}, h, d, tc.aliases)); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	if got, want := string(hostNetworkHosts([]byte("127.0.0.1 localhost\n"), nil)), "# Kubernetes-managed hosts file (host network).\n127.0.0.1 localhost\n"; got != want {
		t.Errorf("host network: got %q, want %q", got, want)
	}
	long := "a234567890b234567890c234567890d234567890e234567890f234567890abc-def"
	if h, _ := podHostname(&corev1.PodSpec{}, long, "ns", "cd"); h != long[:63] {
		t.Errorf("truncated hostname %q", h)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	for i, tc := range []struct {
		data    string
		changed bool
	}{{"a\n", true}, {"a\n", false}, {"b\n", true}} {
		changed, err := writeFileAtomic(p, []byte(tc.data))
		if err != nil || changed != tc.changed {
			t.Fatalf("write %d: changed=%v err=%v, want changed=%v", i, changed, err, tc.changed)
		}
		if got, _ := os.ReadFile(p); string(got) != tc.data {
			t.Fatalf("write %d: file %q", i, got)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temp files left: %v", entries)
	}
}

// A failed write names the file and the system's error, never the random
// temp file: a retry failing the same way gives the same Event message.
func TestWriteFileAtomicError(t *testing.T) {
	t.Parallel()
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(notDir, "resolv.conf") // a file where the directory should be: fails as root too
	_, err := writeFileAtomic(p, []byte("x"))
	if want := "writing " + p + ": not a directory"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}
