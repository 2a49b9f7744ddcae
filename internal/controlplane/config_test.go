package controlplane

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dnsplane/dnsplane/internal/apiserver/filters"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Config)
		want string // "" = valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"free port", func(c *Config) { c.SecurePort = 0 }, ""},
		{"port too large", func(c *Config) { c.SecurePort = 70000 }, "--secure-port 70000: want a port number, 0-65535 (0 picks a free one)"},
		{"negative port", func(c *Config) { c.SecurePort = -1 }, "--secure-port -1"},
		{"range /33", func(c *Config) { c.ServiceClusterIPRange = "10.96.0.0/33" }, `--service-cluster-ip-range "10.96.0.0/33": netip.ParsePrefix("10.96.0.0/33"): prefix length out of range`},
		{"range too small", func(c *Config) { c.ServiceClusterIPRange = "10.96.0.0/31" }, `--service-cluster-ip-range "10.96.0.0/31": service IP range 10.96.0.0/31 is too small`},
		{"no data dir", func(c *Config) { c.DataDir = "" }, "--data-dir: must not be empty"},
		{"etcd prefix", func(c *Config) { c.EtcdPrefix = "registry" }, `--etcd-prefix "registry"`},
		{"limits", func(c *Config) { c.Limits = &filters.Limits{MaxConnections: -1} }, "--max-connections can not be negative value"},
		{"role", func(c *Config) { c.Roles = []Role{badRole{}} }, "--bad-flag: no"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Config{DataDir: t.TempDir(), SecurePort: 6443}
			tt.mod(&c)
			err := c.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate: %v; want %q", err, tt.want)
			}
			if _, ok := errors.AsType[*ConfigError](err); !ok {
				t.Errorf("Validate: %T is not a *ConfigError", err)
			}
		})
	}
}

type badRole struct{}

func (badRole) Validate() error                         { return ConfigErrorf("--bad-flag: no") }
func (badRole) Components(Cluster) ([]Component, error) { return nil, nil }

func TestShellQuote(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/root/.dnsplane/kubeconfig": "/root/.dnsplane/kubeconfig",
		"/tmp/my dir/kubeconfig":     "'/tmp/my dir/kubeconfig'",
		"/tmp/it's":                  `'/tmp/it'\''s'`,
		"/tmp/$HOME":                 "'/tmp/$HOME'",
		"":                           "''",
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestStartSetsAllowPrivileged: Start hands --allow-privileged to upstream's
// process-wide setting before anything else, and a process that already
// validates with the other value refuses to start as a usage error, leaving
// the data dir unwritten. Every other test here runs with false, the value
// set first.
func TestStartSetsAllowPrivileged(t *testing.T) {
	t.Parallel()
	if err := upstream.AllowPrivileged(false); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "data")
	_, err := Start(t.Context(), Config{DataDir: dir, BindAddress: "127.0.72.1", AllowPrivileged: true})
	const want = "--allow-privileged=true: this process already validates pods with --allow-privileged=false, and the setting is process-wide (k8s.io/kubernetes/pkg/capabilities)"
	if _, ok := errors.AsType[*ConfigError](err); !ok || err.Error() != want {
		t.Errorf("Start with AllowPrivileged in a process that set false: %v, want a ConfigError %q", err, want)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("data dir: %v, want none", err)
	}
}
