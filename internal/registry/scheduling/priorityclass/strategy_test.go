package priorityclass

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

func TestCheckDelete(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		want string // "" when the delete may go ahead
	}{
		{"system-cluster-critical", `priorityclasses.scheduling.k8s.io "system-cluster-critical" is forbidden: this is a system priority class and cannot be deleted`},
		{"system-node-critical", `priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden: this is a system priority class and cannot be deleted`},
		{"high", ""},
		{"system-other", ""}, // validation keeps such names from existing
	} {
		err := New().CheckDelete(tc.name)
		if tc.want == "" && err != nil || tc.want != "" && (!apierrors.IsForbidden(err) || err.Error() != tc.want) {
			t.Errorf("CheckDelete(%s) = %v, want %q", tc.name, err, tc.want)
		}
	}
}
