package upstream

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/core"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/capabilities"
	"k8s.io/utils/ptr"
)

// TestAllowPrivileged: the value reaches upstream's pod validation, the
// first value a process takes is the one it keeps, and asking for another
// later is an error naming the flag. Not parallel: capabilities is
// process-wide, which is what is tested; each case starts from a process
// that has set nothing.
func TestAllowPrivileged(t *testing.T) {
	t.Cleanup(capabilities.ResetForTest)
	const refused = "securityContext.privileged: Forbidden: disallowed by cluster policy"
	validate := func() string {
		errs := corevalidation.ValidateSecurityContext(&core.SecurityContext{Privileged: ptr.To(true)},
			field.NewPath("securityContext"), false, false)
		if len(errs) == 0 {
			return ""
		}
		return errs.ToAggregate().Error()
	}
	tests := []struct {
		name string
		// before runs first: a value set, or a validation that fixes
		// kube's default.
		before    func()
		allow     bool
		wantErr   string
		wantValid bool
	}{
		{name: "allowed", allow: true, wantValid: true},
		{name: "refused, kube's default", allow: false},
		{name: "same value twice", before: func() { _ = AllowPrivileged(true) }, allow: true, wantValid: true},
		{name: "a second value", before: func() { _ = AllowPrivileged(false) }, allow: true,
			wantErr: "--allow-privileged=true: this process already validates pods with --allow-privileged=false, and the setting is process-wide (k8s.io/kubernetes/pkg/capabilities)"},
		{name: "after a validation fixed the default", before: func() { validate() }, allow: true,
			wantErr: "--allow-privileged=true: this process already validates pods with --allow-privileged=false, and the setting is process-wide (k8s.io/kubernetes/pkg/capabilities)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			capabilities.ResetForTest()
			if tt.before != nil {
				tt.before()
			}
			err := AllowPrivileged(tt.allow)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("AllowPrivileged(%t) = %v, want %q", tt.allow, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("AllowPrivileged(%t): %v", tt.allow, err)
			}
			want := refused
			if tt.wantValid {
				want = ""
			}
			if got := validate(); got != want {
				t.Errorf("a privileged container with --allow-privileged=%t: %q, want %q", tt.allow, got, want)
			}
		})
	}
}
