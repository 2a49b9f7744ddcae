package agent

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/resolvconf"
)

// A pod CIDR with no address left fails the sandbox with host-local IPAM's
// error, which the pod's FailedCreatePodSandBox Event carries as kubelet's
// does. (Admission keeps pods within the capacity, so this is a pod that
// was admitted while another still holds an address.)
func TestSandboxIPAMError(t *testing.T) {
	t.Parallel()
	a, err := New(Config{Client: &rest.Config{}, NodeName: "n", PodCIDR: "10.0.0.0/30", StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.ips.Allocate("other"); err != nil {
		t.Fatal(err)
	}
	p := &dpcorev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u"}}
	_, err = a.setUpSandbox("ns/p", p, resolvconf.Config{})
	if want := "failed to allocate for range 0: no IP addresses available in range set: 10.0.0.2-10.0.0.2"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}
