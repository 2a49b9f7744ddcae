package e2e

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TestTokenAuthFile starts a server with --token-auth-file: its tokens work
// next to the generated admin token.
func TestTokenAuthFile(t *testing.T) {
	requireKubectl(t)
	tokens := writeFile(t, "tokens.csv", "alice-token,alice,alice-uid,\"system:masters,devs\"\n")
	srv := startServer(t, t.TempDir(), "--token-auth-file", tokens)
	alice := kubeconfigWithUser(t, srv.Kubeconfig, &clientcmdapi.AuthInfo{Token: "alice-token"})
	wantKubectl(t, alice, "", ok("namespace/default"), "get", "namespace", "default", "-o", "name")
	wantKubectl(t, srv.Kubeconfig, "", ok("namespace/default"), "get", "namespace", "default", "-o", "name")
	mustKubectl(t, srv.Kubeconfig, "", "api-resources") // cache discovery: the 401 is then the request's own
	wantKubectl(t, kubeconfigWithUser(t, srv.Kubeconfig, &clientcmdapi.AuthInfo{Token: "bob-token"}), "",
		failed("error: You must be logged in to the server (Unauthorized)"), "get", "namespace", "default", "-o", "name")
}

// TestBadFlags checks that the server refuses bad configuration at start,
// with a message naming the problem and a non-zero exit.
func TestBadFlags(t *testing.T) {
	badTokens := writeFile(t, "tokens.csv", "onlytwo,cols\n")
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string // the last line of stderr
	}{
		{"unknown gate", []string{"--feature-gates=Bogus=true"}, 2,
			`error: invalid --feature-gates "Bogus=true": unrecognized feature gate: Bogus`},
		{"bad gate value", []string{"--feature-gates=RelaxedDNSSearchValidation=maybe"}, 2, ""},
		{"token file", []string{"--token-auth-file", badTokens}, 1,
			"error: token file: token file " + badTokens + " line 1: must have at least 3 columns (token, user name, user uid), found 2"},
		{"service range", []string{"--service-cluster-ip-range", "nope"}, 2,
			`error: --service-cluster-ip-range "nope": netip.ParsePrefix("nope"): no '/'`},
		{"unknown flag", []string{"--bogus"}, 2, "error: unknown flag: --bogus"},
		{"authorization mode", []string{"--authorization-mode", "Node,Bogus"}, 2,
			`error: --authorization-mode: authorization-mode "Bogus" is not a valid mode`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"apiserver", "--data-dir", filepath.Join(t.TempDir(), "data"), "--secure-port", "0"}, tt.args...)
			p, err := startProcess("dnsplane", dnsplaneBin, args...)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(p.kill)
			select {
			case <-p.exited:
			case <-time.After(serverStartTimeout):
				t.Fatalf("still running after %v; stdout:\n%s", serverStartTimeout, p.stdout.String())
			}
			var exitErr *exec.ExitError
			code := 0
			if p.err != nil {
				if !errors.As(p.err, &exitErr) {
					t.Fatal(p.err)
				}
				code = exitErr.ExitCode()
			}
			lines := strings.Split(strings.TrimRight(p.stderr.String(), "\n"), "\n")
			last := lines[len(lines)-1]
			if code != tt.wantCode || (tt.wantErr != "" && last != tt.wantErr) || (tt.wantErr == "" && !strings.HasPrefix(last, "error: ")) {
				t.Errorf("exit %d, last line of stderr %q; want exit %d and %q", code, last, tt.wantCode, tt.wantErr)
			}
			if strings.Contains(p.stdout.String(), "API server at") {
				t.Errorf("it served: %s", p.stdout.String())
			}
		})
	}
}
