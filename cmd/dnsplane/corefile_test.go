package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docBlock returns the fenced code block that follows marker in doc.
func docBlock(t *testing.T, doc, marker string) string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, marker)
	if !ok {
		t.Fatalf("docs/dns-operator.md has no %s", marker)
	}
	_, rest, _ = strings.Cut(rest, "```")
	_, rest, _ = strings.Cut(rest, "\n") // the fence's info string
	block, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatalf("unterminated block after %s", marker)
	}
	return block
}

// TestCorefileDocExample runs the example of docs/dns-operator.md
// ("`dnsplane corefile`") as the page shows it and checks that the command prints what the doc says.
func TestCorefileDocExample(t *testing.T) {
	chdirRoot(t)
	doc, err := os.ReadFile("docs/dns-operator.md")
	if err != nil {
		t.Fatal(err)
	}
	in := docBlock(t, string(doc), "<!-- corefile-example-input -->")
	want := docBlock(t, string(doc), "<!-- corefile-example-output -->")
	file := filepath.Join(t.TempDir(), "dns.yaml")
	if err := os.WriteFile(file, []byte(in), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCmd(t, "", "corefile", "-f", file)
	if code != 0 || out != want || errOut != "" {
		t.Fatalf("exit %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", code, out, want, errOut)
	}
}

func TestCorefileErrors(t *testing.T) {
	const dns = "apiVersion: operator.dnsplane.io/v1\nkind: DNS\nmetadata: {name: default}\nspec:\n  pluginConfig:\n    forwardPlugins:\n"
	tests := []struct {
		name    string
		stdin   string
		args    []string
		code    int
		wantErr string
	}{
		{name: "invalid", stdin: dns + "    - {domain: foo.com, nameServers: [ns1.foo.com], policy: random}\n", code: 1,
			wantErr: `-:7:39: spec.pluginConfig.forwardPlugins[0].nameServers[0]: Invalid value: "ns1.foo.com": must be an IP address with an optional port: IPv4, IPv4:PORT, IPv6 or [IPv6]:PORT
-:7:53: spec.pluginConfig.forwardPlugins[0].policy: Unsupported value: "random": supported values: "Random", "RoundRobin", "Sequential"
`},
		{name: "unknown field", stdin: dns + "    - domain: foo.com\n      nameServers: [192.0.2.1]\n      polcy: Random\n", code: 1,
			wantErr: "-:9:7: spec.pluginConfig.forwardPlugins[0].polcy: unknown field \"spec.pluginConfig.forwardPlugins[0].polcy\"\n"},
		{name: "the cluster domain given", stdin: dns + "    - {domain: corp.example, nameServers: [192.0.2.1]}\n", args: []string{"--cluster-domain", "corp.example"}, code: 1,
			wantErr: `-:7:8: spec.pluginConfig.forwardPlugins[0].domain: Invalid value: "corp.example": must not be the cluster domain "corp.example": the cluster DNS answers those names itself
`},
		{name: "not a DNS", stdin: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", code: 1,
			wantErr: "error: -: v1 ConfigMap is not a DNS (apiVersion operator.dnsplane.io/v1, kind DNS)\n"},
		{name: "bad listen", stdin: dns + "    - {domain: foo.com, nameServers: [192.0.2.1]}\n", args: []string{"--listen", "5353"}, code: 2,
			wantErr: `listen address "5353": want ADDR:PORT or :PORT`},
		{name: "kubeconfig missing", stdin: dns + "    - {domain: foo.com, nameServers: [192.0.2.1]}\n", args: []string{"--kubeconfig", "/nonexistent/kubeconfig"}, code: 1,
			wantErr: "Corefile does not load"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runCmd(t, tt.stdin, append([]string{"corefile", "-f", "-"}, tt.args...)...)
			if code != tt.code || out != "" || !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit %d and stderr containing:\n%s", code, out, errOut, tt.code, tt.wantErr)
			}
		})
	}
	if _, errOut, code := runCmd(t, "", "corefile"); code != 2 {
		t.Errorf("without -f: exit %d, %s", code, errOut)
	}
}
