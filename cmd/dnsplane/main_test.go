package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dnsplane/dnsplane/internal/podexec"
	"github.com/dnsplane/dnsplane/internal/podsandbox"
)

// asDnsplaneEnv=1 makes the test binary run its arguments as dnsplane
// would, for commands that must run in their own process (exec replaces
// it).
const asDnsplaneEnv = "DNSPLANE_TEST_AS_BINARY"

// TestMain lets the test binary stand in for dnsplane when `up` re-runs
// itself as the etcd member or the operator as its Corefile dry load
// (os.Executable is the test binary here).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && (os.Args[1] == etcdMemberCommand || os.Args[1] == corefileCheckCommand || os.Args[1] == podexec.Subcommand || os.Args[1] == podsandbox.Subcommand ||
		os.Getenv(asDnsplaneEnv) == "1") {
		os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	cleanup, err := isolateFromMachine()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// runCmd runs the command line in-process, as a user would from the
// repository root, and returns stdout, stderr and the exit status.
func runCmd(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), code
}

func chdirRoot(t *testing.T) {
	t.Helper()
	t.Chdir("../..")
}

func TestResolvconfCustomExample(t *testing.T) {
	chdirRoot(t)
	base := []string{"resolvconf", "-f", "examples/custom-pod.yaml", "--host-resolv-conf", "examples/host-resolv.conf", "--cluster-dns", "10.240.0.10", "--namespace", "ns1"}
	tests := []struct {
		name  string
		extra []string
		want  string
	}{
		{"runtime order", nil,
			"search ns1.svc.cluster.local my.dns.search.suffix foo.com bar.com\nnameserver 10.240.0.10\noptions ndots:2\n"},
		// The layout docs/resolvconf.md ("Line order") documents for --nameserver-first.
		{"nameserver first", []string{"--nameserver-first"},
			"nameserver 10.240.0.10\nsearch ns1.svc.cluster.local my.dns.search.suffix foo.com bar.com\noptions ndots:2\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runCmd(t, "", append(base, tt.extra...)...)
			if code != 0 || out != tt.want || errOut != "" {
				t.Fatalf("exit %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", code, out, tt.want, errOut)
			}
		})
	}
}

func TestResolvconfPolicies(t *testing.T) {
	chdirRoot(t)
	host := "examples/host-resolv.conf"
	tests := []struct {
		name     string
		pod      string
		args     []string
		want     string
		wantErr  string
		wantCode int
	}{
		{name: "autopath prefers the node cache", pod: "examples/autopath-pod.yaml", args: []string{"-n", "ns1", "--node-cache", "169.254.20.10"},
			want: "search search.ns1.cluster.local.ap.k8s.io\nnameserver 169.254.20.10\noptions ndots:5\n"},
		{name: "autopath without node cache", pod: "examples/autopath-pod.yaml", args: []string{"-n", "ns1"},
			want: "search search.ns1.cluster.local.ap.k8s.io\nnameserver 10.96.0.10\noptions ndots:5\n"},
		{name: "cluster first from stdin", pod: "-",
			want: "search team.svc.cluster.local svc.cluster.local cluster.local foo.com bar.com\nnameserver 10.96.0.10\noptions ndots:5\n"},
		{name: "none", pod: "examples/dot-search-pod.yaml",
			want: "search . default.svc.cluster.local svc.cluster.local cluster.local\nnameserver 1.2.3.4\n"},
		{name: "invalid pod", pod: "examples/dot-search-pod.yaml", args: []string{"--feature-gates", "RelaxedDNSSearchValidation=false"},
			wantErr: `examples/dot-search-pod.yaml:16:9: spec.dnsConfig.searches[0]: Invalid value: ""`, wantCode: 1},
		{name: "bad cluster dns", pod: "examples/custom-pod.yaml", args: []string{"--cluster-dns", "ten"},
			wantErr: `--cluster-dns: "ten" is not an IP address`, wantCode: 2},
		{name: "missing host file", pod: "examples/custom-pod.yaml", args: []string{"--host-resolv-conf", "/nonexistent/resolv.conf"},
			wantErr: "/nonexistent/resolv.conf", wantCode: 2},
	}
	stdinPod := "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: team}\nspec: {containers: [{name: c, image: i}]}\n"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"resolvconf", "-f", tt.pod}, tt.args...)
			if !slices.Contains(tt.args, "--host-resolv-conf") {
				args = append(args, "--host-resolv-conf", host)
			}
			out, errOut, code := runCmd(t, stdinPod, args...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, out, errOut)
			}
			if tt.want != "" && out != tt.want {
				t.Errorf("stdout:\n%s\nwant:\n%s", out, tt.want)
			}
			if !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("stderr %q does not contain %q", errOut, tt.wantErr)
			}
		})
	}
}

func TestResolvconfWarnings(t *testing.T) {
	dir := t.TempDir()
	pod := filepath.Join(dir, "pod.yaml")
	writeFile(t, pod, `apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns1}
spec:
  containers: [{name: c, image: i}]
  dnsConfig:
    nameservers: [10.0.0.1, 10.0.0.2, 10.0.0.3]
`)
	out, errOut, code := runCmd(t, "", "resolvconf", "-f", pod, "--host-resolv-conf", "")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "Warning: DNSConfigForming: Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 10.96.0.10 10.0.0.1 10.0.0.2\n"
	if errOut != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", errOut, want)
	}
	if !strings.Contains(out, "nameserver 10.0.0.2\n") || strings.Contains(out, "10.0.0.3") {
		t.Errorf("stdout:\n%s", out)
	}
}

func TestValidateKEP4427Examples(t *testing.T) {
	chdirRoot(t)
	for _, file := range []string{"examples/underscore-search-pod.yaml", "examples/dot-search-pod.yaml"} {
		t.Run(file, func(t *testing.T) {
			if out, errOut, code := runCmd(t, "", "validate", "-f", file); code != 0 {
				t.Errorf("gate on: exit %d\n%s%s", code, out, errOut)
			}
			out, _, code := runCmd(t, "", "validate", "-q", "-f", file, "--feature-gates=RelaxedDNSSearchValidation=false")
			if code != 1 || !strings.HasPrefix(out, file+":16:9: spec.dnsConfig.searches[0]: Invalid value: ") ||
				!strings.Contains(out, "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'") {
				t.Errorf("gate off: exit %d, stdout:\n%s", code, out)
			}
		})
	}
}

func TestValidateInvalidDeployment(t *testing.T) {
	chdirRoot(t)
	out, errOut, code := runCmd(t, "", "validate", "-f", "examples/invalid-deployment.yaml")
	want := `examples/invalid-deployment.yaml:11:3: spec.paused: duplicate field "spec.paused"
examples/invalid-deployment.yaml:24:9: spec.template.spec.containers[0].unknownField: unknown field "spec.template.spec.containers[0].unknownField"
examples/invalid-deployment.yaml:29:13: spec.template.spec.dnsParams.custom.search[0]: Invalid value: "abc$(NAMESPACE)1234.example.com": substitution "$(NAMESPACE)" must be a whole DNS label, not part of the label "abc$(NAMESPACE)1234"
examples/invalid-deployment.yaml:30:13: spec.template.spec.dnsParams.custom.search[1]: Invalid value: "$HOST": "$HOST" is not a substitution: write "$(HOST)"
examples/invalid-deployment.yaml:32:13: spec.template.spec.dnsParams.custom.options[0]: Invalid value: "ndots:16": ndots must be an integer between 0 and 15 (glibc and musl cap it at 15)
`
	if code != 1 || out != want {
		t.Errorf("exit %d\nstdout:\n%s\nwant:\n%s", code, out, want)
	}
	if errOut != "1 objects: 0 valid, 1 invalid, 0 skipped\n" {
		t.Errorf("stderr: %q", errOut)
	}
}

func TestValidateInputs(t *testing.T) {
	dir := t.TempDir()
	multi := filepath.Join(dir, "multi.yaml")
	writeFile(t, multi, `# a comment-only document
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
data: {a: b}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: x}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: cj}
spec:
  schedule: "* * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          containers: [{name: c, image: i}]
          dnsPolicy: Bogus
`)
	jsonFile := filepath.Join(dir, "pod.json")
	writeFile(t, jsonFile, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}],"dnsPolicy":"ClusterFirstWithAutopath"}}`)
	empty := filepath.Join(dir, "empty.yaml")
	writeFile(t, empty, "")
	binary := filepath.Join(dir, "binary.yaml")
	writeFile(t, binary, "apiVersion: v1\x00\x01\x02kind: Pod\n")
	notYAML := filepath.Join(dir, "bad.yaml")
	writeFile(t, notYAML, "apiVersion: v1\nkind: Pod\nmetadata: {name: [unclosed\n")
	big := filepath.Join(dir, "big.yaml")
	writeFile(t, big, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n  a: \""+strings.Repeat("x", 10<<20)+"\"\n")
	noKind := filepath.Join(dir, "nokind.yaml")
	writeFile(t, noKind, "apiVersion: v1\nmetadata: {name: x}\n")

	tests := []struct {
		name      string
		args      []string
		stdin     string
		wantCode  int
		wantOut   []string
		wantNoOut bool
	}{
		{name: "multi-document", args: []string{"-f", multi}, wantCode: 1, wantOut: []string{
			multi + ":8:1: skipped: apiextensions.k8s.io/v1 CustomResourceDefinition is not a kind dnsplane serves",
			multi + `:22:11: spec.jobTemplate.spec.template.spec.dnsPolicy: Unsupported value: "Bogus": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None", "Custom", "ClusterFirstWithAutopath"`,
		}},
		{name: "json valid", args: []string{"-f", jsonFile}, wantNoOut: true},
		{name: "json with autopath gate off", args: []string{"-f", jsonFile, "--feature-gates", "PodDNSAutopath=false"}, wantCode: 1,
			wantOut: []string{`spec.dnsPolicy: Unsupported value: "ClusterFirstWithAutopath": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None", "Custom"`}},
		{name: "stdin", args: []string{"-f", "-"}, stdin: "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i}], bogus: 1}\n",
			wantCode: 1, wantOut: []string{`-:4:43: spec.bogus: unknown field "spec.bogus"`}},
		{name: "empty file", args: []string{"-f", empty}, wantCode: 1, wantOut: []string{empty + ": "}},
		{name: "binary file", args: []string{"-f", binary}, wantCode: 1, wantOut: []string{binary}},
		{name: "not yaml", args: []string{"-f", notYAML}, wantCode: 1, wantOut: []string{notYAML}},
		{name: "10 MB object", args: []string{"-f", big}, wantCode: 1, wantOut: []string{big}},
		{name: "no kind", args: []string{"-f", noKind}, wantCode: 1, wantOut: []string{"kind: Required value"}},
		{name: "directory", args: []string{"-f", filepath.Join(dir)}, wantCode: 1, wantOut: []string{"skipped", "Bogus"}},
		{name: "no -f", args: nil, wantCode: 2},
		{name: "missing path", args: []string{"-f", filepath.Join(dir, "nope.yaml")}, wantCode: 2},
		{name: "bad gate", args: []string{"-f", jsonFile, "--feature-gates", "Nope=true"}, wantCode: 2},
		{name: "unknown flag", args: []string{"--nope"}, wantCode: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runCmd(t, tt.stdin, append([]string{"validate", "-q"}, tt.args...)...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, out, errOut)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("stdout does not contain %q:\n%s", w, out)
				}
			}
			if tt.wantNoOut && out != "" {
				t.Errorf("unexpected stdout:\n%s", out)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	out, _, code := runCmd(t, "", "version")
	if code != 0 || !strings.HasPrefix(out, "dnsplane v") || strings.Contains(out, "(devel)") {
		t.Fatalf("exit %d: %q, want dnsplane's version, never (devel)", code, out)
	}
	if !strings.Contains(out, "\nKubernetes v1.") {
		t.Errorf("%q names no Kubernetes release", out)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
