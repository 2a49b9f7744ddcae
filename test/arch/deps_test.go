// Package arch checks the dependency rule of docs/architecture.md
// ("Assembly and the dependency rule") with `go list`, so that a change
// that breaks it fails a test instead of waiting for review.
package arch

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/dnsplane/dnsplane/"

// deps returns, for each package matching pattern, the module's packages
// it imports directly or indirectly.
func deps(t *testing.T, pattern string) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-json=ImportPath,Deps", module+pattern).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pattern, err)
	}
	res := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct {
			ImportPath string
			Deps       []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		for _, d := range p.Deps {
			if strings.HasPrefix(d, module) || strings.HasPrefix(d, "github.com/coredns/coredns/plugin/") {
				res[p.ImportPath] = append(res[p.ImportPath], d)
			}
		}
	}
	return res
}

// TestDependencyRule: dependencies point one way, cmd → controlplane →
// apiserver and the roles → registry, printers, discovery, corefile, … →
// validation, resolvconf → api.
func TestDependencyRule(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the module")
	}
	tests := []struct {
		pattern   string
		forbidden []string // package path prefixes, relative to the module unless absolute
		why       string
	}{
		{"api/...", []string{"internal/", "cmd/", "plugin/"}, "the public types depend on nothing of ours"},
		{"internal/registry/...", []string{"internal/apiserver", "internal/controlplane", "internal/coredns"}, "strategies are used by the server and by offline tools"},
		{"internal/printers/...", []string{"internal/apiserver", "internal/controlplane"}, "printers take api.Resource"},
		{"internal/discovery/...", []string{"internal/apiserver", "internal/controlplane"}, "discovery takes its resource list"},
		{"internal/negotiation/...", []string{"internal/"}, "a leaf"},
		{"internal/admission/podsecurity/...", []string{"internal/"}, "Pod Security admission is upstream's library over k8s.io/api objects, run by the admission chain"},
		{"internal/admission/...", []string{"internal/apiserver", "internal/controlplane", "cmd/"}, "admission plugins judge objects; the store runs them"},
		{"internal/openapi/...", []string{"internal/apiserver", "internal/controlplane"}, "documents take their resource list"},
		{"internal/validation/...", []string{"internal/apiserver", "internal/registry", "internal/controlplane"}, "the pod DNS domain is pure functions"},
		{"internal/resolvconf/...", []string{"internal/apiserver", "internal/registry", "internal/controlplane"}, "the pod DNS domain is pure functions"},
		{"internal/corefile/...", []string{"internal/coredns", "internal/apiserver", "github.com/coredns/coredns/plugin/"}, "rendering a Corefile links no CoreDNS plugin"},
		{"internal/apiserver/...", []string{"internal/controlplane", "internal/coredns", "cmd/"}, "the API server does not know the roles beside it"},
		{"internal/apiserver/filters/...", []string{"internal/apiserver", "internal/registry", "internal/storage"}, "filters wrap handlers and know nothing of what they serve"},
		{"internal/watchcache/...", []string{"internal/apiserver", "internal/registry", "internal/controlplane"}, "the watch cache takes a source, a decoder and an index function"},
		{"plugin/...", []string{"internal/"}, "our plugins are for anyone building CoreDNS"},
		{"internal/nodeplan/...", []string{"internal/"}, "a leaf: up's assembly plans the nodes and dnsplane exec finds their files with it"},
		{"internal/podexec/...", []string{"internal/controlplane", "cmd/"}, "dnsplane exec reads what up wrote, through nodeplan, without linking the control plane"},
		{"internal/leaderelect/...", []string{"internal/"}, "a leaf over client-go's leaderelection"},
		{"internal/controllers/...", []string{"internal/controlplane", "internal/apiserver", "cmd/"}, "the controllers are API clients; their role in internal/controlplane assembles them"},
		{"internal/scheduler/...", []string{"internal/controlplane", "internal/apiserver", "cmd/"}, "the scheduler is an API client; its role in internal/controlplane assembles it"},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			for pkg, ds := range deps(t, tt.pattern) {
				for _, d := range ds {
					for _, f := range tt.forbidden {
						if !strings.Contains(f, ".") {
							f = module + f
						}
						if strings.HasPrefix(d, f) && !strings.HasPrefix(d, pkg) {
							t.Errorf("%s imports %s: %s", strings.TrimPrefix(pkg, module), strings.TrimPrefix(d, module), tt.why)
						}
					}
				}
			}
		})
	}
}

// TestCmdOnlyWires: cmd/ maps flags to the packages that do the work and
// never reaches past them into what they are built on, nor assembles
// `up`'s roles itself. The PKI is set up
// by internal/controlplane and named by the packages that use it
// (internal/podserver.APIServerClient), so cmd/ imports neither directly.
func TestCmdOnlyWires(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", module+"cmd/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
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
		for _, imp := range p.Imports {
			for _, forbidden := range []string{"internal/pki", "internal/storage", "internal/authn"} {
				if imp == module+forbidden {
					t.Errorf("%s imports %s: cmd/ only wires flags to the packages that do the work", strings.TrimPrefix(p.ImportPath, module), forbidden)
				}
			}
			// Which roles `up` runs, for which nodes, in which order, is
			// internal/controlplane/up's to decide (docs/architecture.md,
			// "Assembly and the dependency rule").
			for _, forbidden := range []string{"internal/controlplane/agentrole", "internal/controlplane/operatorrole",
				"internal/controlplane/schedulerrole", "internal/controlplane/nodepower"} {
				if imp == module+forbidden {
					t.Errorf("%s imports %s: up's roles are assembled by internal/controlplane/up", strings.TrimPrefix(p.ImportPath, module), forbidden)
				}
			}
		}
	}
}

// TestTestkitOnlyInTests: internal/testkit (polls that fail a test, ports
// that were free a moment ago) is for _test.go files; no package the
// binaries are built from imports it.
func TestTestkitOnlyInTests(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the module")
	}
	const testkit = module + "internal/testkit"
	for pkg, ds := range deps(t, "...") {
		if pkg == testkit || strings.HasSuffix(pkg, "test") {
			continue
		}
		for _, d := range ds {
			if d == testkit {
				t.Errorf("%s imports internal/testkit, which only tests may import", strings.TrimPrefix(pkg, module))
			}
		}
	}
}
