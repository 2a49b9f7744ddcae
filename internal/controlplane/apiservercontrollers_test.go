package controlplane_test

import (
	"context"
	"os"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
)

// TestAPIServerControllers: a bare API server keeps the kube-system
// ConfigMaps kube-apiserver's own controllers keep:
// extension-apiserver-authentication with the client CA (and no
// requestheader keys, there being no front proxy), which delegated
// authentication reads, and the legacy token tracking date.
func TestAPIServerControllers(t *testing.T) {
	t.Parallel()
	ts := controlplanetest.StartTestServer(t, controlplane.Config{})
	ctx := context.Background()
	ca := ts.ClientConfig.CAData
	if len(ca) == 0 {
		var err error
		if ca, err = os.ReadFile(ts.ClientConfig.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	cms := ts.Client.CoreV1().ConfigMaps("kube-system")
	for _, tc := range []struct {
		name string
		want func(data map[string]string) bool
	}{
		{"extension-apiserver-authentication", func(d map[string]string) bool {
			return len(d) == 1 && d["client-ca-file"] == string(ca)
		}},
		{"kube-apiserver-legacy-service-account-token-tracking", func(d map[string]string) bool {
			_, err := time.Parse(time.DateOnly, d["since"])
			return len(d) == 1 && err == nil
		}},
	} {
		var last map[string]string
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			cm, err := cms.Get(ctx, tc.name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			last = cm.Data
			return tc.want(cm.Data), nil
		})
		if err != nil {
			t.Errorf("kube-system/%s: %v; last data %q", tc.name, err, last)
		}
	}
}
