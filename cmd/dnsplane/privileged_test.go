package main

import (
	"io"
	"testing"

	"github.com/spf13/cobra"
)

// TestAllowPrivilegedFlag: apiserver and up take kube-apiserver's
// --allow-privileged (name, default false, help text) and it reaches the
// control plane's config, which sets it for upstream's validation
// (controlplane.Config.AllowPrivileged, upstream.AllowPrivileged).
func TestAllowPrivilegedFlag(t *testing.T) {
	t.Parallel()
	for name, newCommand := range map[string]func() *cobra.Command{"apiserver": newAPIServerCommand, "up": newUpCommand} {
		f := newCommand().Flags().Lookup("allow-privileged")
		if f == nil {
			t.Errorf("%s has no --allow-privileged", name)
			continue
		}
		if want := "If true, allow privileged containers. [default=false]"; f.DefValue != "false" || f.Usage != want || f.Value.Type() != "bool" {
			t.Errorf("%s --allow-privileged: %s, default %s, %q; want bool, default false, %q", name, f.Value.Type(), f.DefValue, f.Usage, want)
		}
	}
	tests := []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"--allow-privileged"}, true},
		{[]string{"--allow-privileged=true"}, true},
		{[]string{"--allow-privileged=false"}, false},
	}
	for _, tt := range tests {
		var a apiServerFlags
		cmd := &cobra.Command{}
		cmd.SetErr(io.Discard)
		a.register(cmd.Flags())
		if err := cmd.Flags().Parse(tt.args); err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		c, err := a.config(cmd)
		if err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		if c.AllowPrivileged != tt.want {
			t.Errorf("%v: Config.AllowPrivileged = %t, want %t", tt.args, c.AllowPrivileged, tt.want)
		}
	}
}
