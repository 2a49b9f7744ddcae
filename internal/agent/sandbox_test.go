package agent

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	dplisters "github.com/dnsplane/dnsplane/api/client/listers/core/v1"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/podsandbox"
)

// TestEnsureSandboxRefuses: a session's request starts a sandbox only for
// a pod of this node that runs (docs/exec.md).
func TestEnsureSandboxRefuses(t *testing.T) {
	t.Parallel()
	now := metav1.Now()
	pod := func(name, node string, phase corev1.PodPhase, deleting bool) *dpcorev1.Pod {
		p := &dpcorev1.Pod{}
		p.Name, p.Namespace, p.UID = name, "ns1", types.UID("uid-"+name)
		p.Spec.NodeName, p.Status.Phase = node, phase
		if deleting {
			p.DeletionTimestamp = &now
		}
		return p
	}
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, p := range []*dpcorev1.Pod{
		pod("running", "node-1", corev1.PodRunning, false),
		pod("elsewhere", "node-2", corev1.PodRunning, false),
		pod("deleting", "node-1", corev1.PodRunning, true),
		pod("done", "node-1", corev1.PodSucceeded, false),
	} {
		if err := indexer.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	a := &Agent{cfg: Config{NodeName: "node-1"}, lister: dplisters.NewPodLister(indexer)}
	if err := a.EnsureSandbox(context.Background(), "uid-running"); err == nil || !strings.Contains(err.Error(), "runs no pod sandboxes") {
		t.Errorf("without sandboxes: err %v", err)
	}
	a.sandboxes = &podsandbox.Manager{} // never reached: every case is refused first
	for uid, want := range map[types.UID]string{
		"uid-elsewhere": "no pod with UID uid-elsewhere on node node-1",
		"uid-nosuch":    "no pod with UID uid-nosuch on node node-1",
		"uid-deleting":  "pod ns1/deleting is not running",
		"uid-done":      "pod ns1/done is not running",
	} {
		if err := a.EnsureSandbox(context.Background(), uid); err == nil || err.Error() != want {
			t.Errorf("%s: err %v, want %q", uid, err, want)
		}
	}
}
