package controllersrole_test

import (
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/dnsplane/dnsplane/internal/controllers"
	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controllersrole"
)

// TestValidate: --controllers is checked before anything starts, as a
// usage error naming the flag.
func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		selection []string
		wantErr   string
	}{
		{selection: nil},
		{selection: []string{"*"}},
		{selection: []string{"*", "-garbage-collector-controller"}},
		{selection: []string{"no-such-controller"}, wantErr: `--controllers: "no-such-controller" is not a known controller`},
	}
	for _, tt := range tests {
		err := controllersrole.New(controllers.Options{Controllers: tt.selection}).Validate()
		if tt.wantErr == "" {
			if err != nil {
				t.Errorf("Validate(%q) = %v; want nil", tt.selection, err)
			}
			continue
		}
		if _, ok := errors.AsType[*controlplane.ConfigError](err); !ok || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("Validate(%q) = %v; want a *ConfigError with %q", tt.selection, err, tt.wantErr)
		}
	}
}

// TestComponents: without a selection the role runs the deletion
// controllers, as the API server's loopback client; an empty selection
// runs nothing.
func TestComponents(t *testing.T) {
	t.Parallel()
	loopback := &rest.Config{Host: "https://127.0.0.1:1", BearerToken: "loopback"}
	cl := controlplane.Cluster{Loopback: loopback, Logger: slog.New(slog.DiscardHandler), DataDir: t.TempDir()}
	tests := []struct {
		name      string
		selection []string
		want      []string // nil: no component
	}{
		{name: "default", selection: nil, want: controllersrole.DeletionControllers()},
		{name: "none", selection: []string{}},
		{name: "one", selection: []string{"replicaset-controller"}, want: []string{"replicaset-controller"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			comps, err := controllersrole.New(controllers.Options{Controllers: tt.selection}).Components(cl)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == nil {
				if len(comps) != 0 {
					t.Fatalf("components %v; want none", comps)
				}
				return
			}
			if len(comps) != 1 {
				t.Fatalf("components %v; want the controller manager", comps)
			}
			m, ok := comps[0].(*controllers.Manager)
			if !ok {
				t.Fatalf("component %T; want *controllers.Manager", comps[0])
			}
			if m.Name() != "controllers" || !slices.Equal(m.Controllers, tt.want) {
				t.Errorf("manager %q runs %q; want controllers running %q", m.Name(), m.Controllers, tt.want)
			}
			if m.Config != loopback || m.Kubeconfig != "" {
				t.Errorf("manager's client: config %v, kubeconfig %q; want the loopback", m.Config, m.Kubeconfig)
			}
		})
	}
}
