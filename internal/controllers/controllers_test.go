package controllers

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestFirstDiscovery: the namespace controller's constructor never sees a
// discovery that lists nothing (upstream would exit the process); later
// calls go to discovery itself.
func TestFirstDiscovery(t *testing.T) {
	t.Parallel()
	lists := []*metav1.APIResourceList{{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "pods"}}}}
	for _, tt := range []struct {
		name     string
		failures int // discovery calls that find nothing before one that lists
		cancel   bool
		wantErr  bool
	}{
		{name: "at once"},
		{name: "after failures", failures: 2},
		{name: "stopped before it answers", failures: 1 << 30, cancel: true, wantErr: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			calls := 0
			discover := func() ([]*metav1.APIResourceList, error) {
				calls++
				if calls <= tt.failures {
					return nil, errors.New("connection refused")
				}
				return lists, nil
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel {
				time.AfterFunc(50*time.Millisecond, cancel)
			}
			fn, err := firstDiscovery(ctx, discover, time.Millisecond)
			if (err != nil) != tt.wantErr {
				t.Fatalf("firstDiscovery: %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if got, err := fn(); err != nil || len(got) != 1 || calls != tt.failures+1 {
				t.Errorf("first call: %v %v after %d discoveries", got, err, calls)
			}
			if _, err := fn(); err != nil || calls != tt.failures+2 {
				t.Errorf("second call did not discover again: %v, %d calls", err, calls)
			}
		})
	}
}

// TestSelect: --controllers as kube-controller-manager reads it, with the
// controllers dnsplane cannot run refused by name and reason.
func TestSelect(t *testing.T) {
	t.Parallel()
	descs := []Descriptor{{Name: "a"}, {Name: "b"}, {Name: "c", Disabled: "no volumes"}}
	names := func(ds []Descriptor) []string {
		var out []string
		for _, d := range ds {
			out = append(out, d.Name)
		}
		return out
	}
	for _, tt := range []struct {
		name      string
		selection []string
		want      []string
		wantErr   string
	}{
		{name: "empty is all", want: []string{"a", "b"}},
		{name: "star", selection: []string{"*"}, want: []string{"a", "b"}},
		{name: "star minus one", selection: []string{"*", "-a"}, want: []string{"b"}},
		{name: "one", selection: []string{"b"}, want: []string{"b"}},
		{name: "none", selection: []string{}, want: []string{"a", "b"}},
		{name: "minus a disabled one", selection: []string{"*", "-c"}, want: []string{"a", "b"}},
		{name: "unknown", selection: []string{"x"}, wantErr: `--controllers: "x" is not a known controller`},
		{name: "disabled", selection: []string{"c"}, wantErr: `--controllers: "c" does not run in dnsplane: no volumes`},
		{name: "empty name", selection: []string{"-"}, wantErr: "--controllers: empty controller name"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Select(descs, tt.selection)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("Select(%q): %v, want error %q", tt.selection, err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(names(got), tt.want) {
				t.Errorf("Select(%q) = %v, %v; want %v", tt.selection, names(got), err, tt.want)
			}
		})
	}
}

// TestDescriptors: every descriptor either runs (a constructor and a
// reason) or says why not, and names are unique.
func TestDescriptors(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, d := range Descriptors() {
		if seen[d.Name] {
			t.Errorf("%s listed twice", d.Name)
		}
		seen[d.Name] = true
		if (d.New == nil) != (d.Disabled != "") || (d.Disabled == "" && d.Why == "") {
			t.Errorf("%s: New set %v, Why %q, Disabled %q: want a constructor and why, or the reason it is disabled", d.Name, d.New != nil, d.Why, d.Disabled)
		}
	}
}

// TestComponentConfig: kube-controller-manager's defaults, with the
// options dnsplane sets.
func TestComponentConfig(t *testing.T) {
	t.Parallel()
	cfg, err := componentConfig(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.NodeLifecycleController.NodeMonitorGracePeriod.Duration; got != 50*time.Second {
		t.Errorf("default node monitor grace period %v, want kube's 50s", got)
	}
	// Zero rates make the node lifecycle controller's NoExecute tainter a
	// never-firing limiter: a Node Ready=Unknown got only the NoSchedule
	// taint and its pods were never evicted.
	if nl := cfg.NodeLifecycleController; nl.NodeEvictionRate != 0.1 || nl.SecondaryNodeEvictionRate != 0.01 {
		t.Errorf("node eviction rates %v, %v; want kube-controller-manager's flag defaults 0.1, 0.01", nl.NodeEvictionRate, nl.SecondaryNodeEvictionRate)
	}
	if got := cfg.DeploymentController.ConcurrentDeploymentSyncs; got != 5 {
		t.Errorf("deployment workers %d, want kube's 5", got)
	}
	cfg, err = componentConfig(Options{NodeMonitorGracePeriod: 5 * time.Second, ClusterSigningCertFile: "ca.crt", ClusterSigningKeyFile: "ca.key"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.NodeLifecycleController.NodeMonitorGracePeriod.Duration != 5*time.Second || cfg.CSRSigningController.ClusterSigningCertFile != "ca.crt" {
		t.Errorf("options not applied: %+v %+v", cfg.NodeLifecycleController, cfg.CSRSigningController)
	}
}
