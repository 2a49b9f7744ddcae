package pki

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

// TestKubectl runs the real kubectl against a server configured like
// dnsplane's, with the kubeconfig EnsureAdmin wrote and variants of it.
func TestKubectl(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not on PATH")
	}
	srv, kubeconfig, _ := newAPIServer(t, t.TempDir())
	certFile, keyFile, err := srv.bundle.IssueClientCert(t.TempDir(), "ops", "ops-user", []string{"ops"})
	if err != nil {
		t.Fatal(err)
	}
	// variant writes a copy of the generated kubeconfig with other credentials.
	// kubectl prompts for a password when a kubeconfig has no credentials at
	// all, so the anonymous variants send basic auth, which kube (and
	// dnsplane) ignore.
	variant := func(name, token, cert, key string) string {
		cfg, err := clientcmd.LoadFromFile(kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		ai := cfg.AuthInfos["dnsplane"]
		ai.Token, ai.ClientCertificate, ai.ClientKey = token, cert, key
		if token == "" && cert == "" {
			ai.Username, ai.Password = "anonymous", "ignored"
		}
		path := filepath.Join(t.TempDir(), name)
		if err := clientcmd.WriteToFile(*cfg, path); err != nil {
			t.Fatal(err)
		}
		return path
	}

	const loggedOut = "error: You must be logged in to the server (Unauthorized)"
	tests := []struct {
		name       string
		kubeconfig string
		path       string
		wantOut    string
		wantErr    string
	}{
		{name: "generated kubeconfig as is", kubeconfig: kubeconfig, path: "/version", wantOut: `"gitVersion":"v1.37.2+dnsplane"`},
		{name: "generated kubeconfig on a private path", kubeconfig: kubeconfig, path: "/api", wantOut: `"Name":"admin"`},
		{name: "client certificate", kubeconfig: variant("cert", "", certFile, keyFile), path: "/api", wantOut: `"Name":"ops-user"`},
		{name: "wrong token", kubeconfig: variant("wrong", "wrong-token", "", ""), path: "/version", wantErr: loggedOut},
		{name: "basic auth counts as no credentials, private path", kubeconfig: variant("anonymous", "", "", ""), path: "/api", wantErr: loggedOut},
		{name: "basic auth counts as no credentials, public path", kubeconfig: variant("anonymous-public", "", "", ""), path: "/version", wantOut: `"gitVersion":"v1.37.2+dnsplane"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, kubectl, "--kubeconfig", tt.kubeconfig, "get", "--raw", tt.path)
			// Keep kubectl away from the user's configuration and caches.
			home := t.TempDir()
			cmd.Env = append(os.Environ(), "HOME="+home, "KUBECONFIG=", "KUBECACHEDIR="+filepath.Join(home, "cache"))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("kubectl succeeded: %s", stdout.String())
				}
				if got := strings.TrimSpace(stderr.String()); got != tt.wantErr {
					t.Fatalf("kubectl stderr = %q, want %q", got, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("kubectl failed: %v\n%s", err, stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.wantOut) {
				t.Fatalf("kubectl output %q does not contain %q", stdout.String(), tt.wantOut)
			}
		})
	}
}
