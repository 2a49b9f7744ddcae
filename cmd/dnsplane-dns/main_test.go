package main

import (
	"bytes"
	"debug/buildinfo"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// controlPlane are the module paths (and package path prefixes) of the
// control plane the data-plane binary must never link: kube's own code,
// the generic API server and etcd's server (issue 30; docs/kubernetes.md,
// "Images").
var controlPlane = []string{
	"k8s.io/kubernetes",
	"k8s.io/apiserver",
	"go.etcd.io/etcd/server",
}

func linksControlPlane(path string) (string, bool) {
	for _, p := range controlPlane {
		if path == p || strings.HasPrefix(path, p+"/") {
			return p, true
		}
	}
	return "", false
}

// TestLinksNoControlPlane builds dnsplane-dns as its image does and reads
// the modules recorded in the binary, and lists the packages it imports:
// neither may name the control plane. A package of internal/ that starts
// to import it from internal/dnscli's closure fails here, naming the
// import chain's end.
func TestLinksNoControlPlane(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel()
	bin := filepath.Join(t.TempDir(), binary)
	build := exec.CommandContext(t.Context(), "go", "build", "-trimpath", "-o", bin, ".")
	build.Env = append(build.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", build, err, out)
	}
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Deps) < 10 {
		t.Fatalf("the binary records %d modules; want CoreDNS's and client-go's dozens", len(info.Deps))
	}
	for _, d := range info.Deps {
		if p, ok := linksControlPlane(d.Path); ok {
			t.Errorf("%s links module %s %s (%s is the control plane's)", binary, d.Path, d.Version, p)
		}
	}

	list := exec.CommandContext(t.Context(), "go", "list", "-deps", "-json=ImportPath,Imports", ".")
	out, err := list.Output()
	if err != nil {
		t.Fatalf("%s: %v", list, err)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if _, bad := linksControlPlane(p.ImportPath); bad {
			continue // reported at its importer
		}
		for _, imp := range p.Imports {
			if cp, ok := linksControlPlane(imp); ok {
				t.Errorf("%s imports %s: %s must not link %s", p.ImportPath, imp, binary, cp)
			}
		}
	}
}

func TestLinksControlPlane(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path string
		want bool
	}{
		{"k8s.io/kubernetes", true},
		{"k8s.io/kubernetes/pkg/apis/core", true},
		{"k8s.io/apiserver/pkg/storage", true},
		{"go.etcd.io/etcd/server/v3", true},
		{"go.etcd.io/etcd/client/v3", false},
		{"k8s.io/apimachinery/pkg/util/wait", false},
		{"k8s.io/kubernetes-extra", false},
		{"k8s.io/client-go/kubernetes", false},
	}
	for _, tt := range tests {
		if _, got := linksControlPlane(tt.path); got != tt.want {
			t.Errorf("linksControlPlane(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

// TestCommands: the binary has exactly the data-plane commands, wired to
// internal/dnscli (whose tests cover them), and exits as dnsplane does.
func TestCommands(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"version", []string{"version"}, 0, binary + " v", ""},
		{"nodecache", []string{"nodecache", "--print-corefile", "--listen", "127.0.0.1:53", "--cluster-dns", "10.96.0.10:53", "--upstream-resolv-conf", "/dev/null"}, 0, "cluster.local:53 ap.k8s.io:53", ""},
		{"dns usage", []string{"dns"}, 2, "", "error: --conf or --configmap is required"},
		{"no control plane command", []string{"up"}, 2, "", `error: unknown command "up" for "dnsplane-dns"`},
		{"no webhook", []string{"webhook"}, 2, "", `unknown command "webhook"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			code := run(t.Context(), tt.args, &stdout, &stderr)
			if code != tt.wantCode || !strings.Contains(stdout.String(), tt.wantStdout) || !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("exit %d (want %d)\nstdout: %s\nstderr: %s", code, tt.wantCode, stdout.String(), stderr.String())
			}
		})
	}
}
