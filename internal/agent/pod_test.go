package agent

import (
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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

// After a restart, pods already started are admitted first (they were
// admitted before), then the others by creation time, up to the capacity;
// terminal and deleted pods do not count.
func TestReadmit(t *testing.T) {
	t.Parallel()
	a, err := New(Config{Client: &rest.Config{}, NodeName: "n", PodCIDR: "10.0.0.0/29", StateDir: t.TempDir()}) // 5 pods
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mk := func(name string, created int, started bool, phase corev1.PodPhase, deleted bool) *dpcorev1.Pod {
		p := &dpcorev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(t0.Add(time.Duration(created) * time.Second))}}
		p.Spec.NodeName = "n"
		p.Status.Phase = phase
		if started {
			p.Status.StartTime = &p.CreationTimestamp
		}
		if deleted {
			p.DeletionTimestamp = &p.CreationTimestamp
		}
		return p
	}
	a.readmit([]*dpcorev1.Pod{
		mk("new-late", 9, false, corev1.PodPending, false),
		mk("new-early", 1, false, corev1.PodPending, false),
		mk("running-late", 8, true, corev1.PodRunning, false),
		mk("done", 0, true, corev1.PodSucceeded, false),
		mk("rejected", 0, false, corev1.PodFailed, false),
		mk("deleting", 0, true, corev1.PodRunning, true),
		mk("new-middle", 5, false, corev1.PodPending, false),
		mk("new-7", 7, false, corev1.PodPending, false),
		mk("new-6", 6, false, corev1.PodPending, false),
	})
	want := map[string]types.UID{"ns/running-late": "uid-running-late", "ns/new-early": "uid-new-early", "ns/new-middle": "uid-new-middle",
		"ns/new-6": "uid-new-6", "ns/new-7": "uid-new-7"}
	if !maps.Equal(a.admitted, want) {
		t.Errorf("admitted %v, want %v", a.admitted, want)
	}
}
