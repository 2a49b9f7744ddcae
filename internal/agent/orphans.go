package agent

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/dnsplane/dnsplane/internal/podfiles"
)

// housekeepingPeriod is how often failed removals of pod directories are
// retried: kubelet's housekeeping period, in which it cleans up orphaned
// pod directories (pkg/kubelet/kubelet.go, housekeepingPeriod).
const housekeepingPeriod = 2 * time.Second

// orphans are the directories of pods that no longer exist whose removal
// failed (a read-only state dir, a busy mount): a failure is logged and
// reported once, and never stops the agent (issue 18: it once deadlocked
// the agent at start). The housekeeping loop retries them.
type orphans struct {
	mu sync.Mutex
	// failed maps a directory's base name to the last removal error's text.
	failed map[string]string
	// rescan is set when the pods directory could not be read, so which
	// directories are orphans is not known yet.
	rescan bool
}

// removeOrphan removes the pod directory base of a pod (uid) that no longer
// exists. A failure is logged with the path and error and, the first time,
// reported as a Warning on the Node; the directory is retried by
// housekeeping. It reports whether the directory is gone.
func (a *Agent) removeOrphan(base string, uid types.UID) bool {
	dir := filepath.Join(podfiles.PodsDir(a.cfg.StateDir), base)
	err := removeDir(dir)
	a.orphans.mu.Lock()
	last, known := a.orphans.failed[base]
	if err == nil {
		delete(a.orphans.failed, base)
	} else {
		a.orphans.failed[base] = err.Error()
	}
	a.orphans.mu.Unlock()
	switch {
	case err == nil && known:
		a.log.Info("removed the orphaned pod dir after all", "path", dir, "uid", uid)
	case err == nil:
	case !known:
		// kubelet's words (pkg/kubelet/kubelet_volumes.go), with the path.
		msg := fmt.Sprintf("orphaned pod %q found, but error occurred when trying to remove the pod directory %s: %v; retrying every %s", uid, dir, err, housekeepingPeriod)
		a.log.Warn("Failed to remove orphaned pod dir", "path", dir, "uid", uid, "err", err, "retry", housekeepingPeriod)
		a.events.recorder.Event(a.nodeRef(), corev1.EventTypeWarning, ReasonFailedRemoveOrphanedPodDir, msg)
	case last != err.Error():
		a.log.Warn("Failed to remove orphaned pod dir", "path", dir, "uid", uid, "err", err, "retry", housekeepingPeriod)
	default:
		a.log.Debug("Failed to remove orphaned pod dir", "path", dir, "uid", uid, "err", err)
	}
	return err == nil
}

// removeOrphans removes the directories of pods that are not live: at
// start, with the pods the synced informer lists, before any worker runs
// (so no live pod's directory is being created meanwhile).
func (a *Agent) removeOrphans(live map[types.UID]bool) {
	dirs, bad, err := podDirs(a.cfg.StateDir)
	a.orphans.mu.Lock()
	a.orphans.rescan = err != nil
	a.orphans.mu.Unlock()
	if err != nil {
		a.log.Warn("reading the pod directories; retrying", "path", podfiles.PodsDir(a.cfg.StateDir), "err", err, "retry", housekeepingPeriod)
		return
	}
	for _, b := range bad {
		a.log.Warn("not a pod directory, left alone", "dir", b)
	}
	a.removeDead(dirs, live)
}

// removeDead removes the directories in dirs of pods not in live.
func (a *Agent) removeDead(dirs map[types.UID]string, live map[types.UID]bool) {
	for uid, base := range dirs {
		if !live[uid] && a.removeOrphan(base, uid) {
			a.log.Info("removed files of a pod that no longer exists", "dir", base, "uid", uid)
		}
	}
}

// housekeeping retries what removeOrphan could not remove until ctx ends.
func (a *Agent) housekeeping(ctx context.Context) {
	t := time.NewTicker(a.housekeepingPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		a.orphans.mu.Lock()
		rescan := a.orphans.rescan
		retry := make([]string, 0, len(a.orphans.failed))
		for base := range a.orphans.failed {
			retry = append(retry, base)
		}
		a.orphans.mu.Unlock()
		if rescan {
			// The directory first, then the pods: a directory the worker
			// created belongs to a pod already in the informer's cache.
			dirs, _, err := podDirs(a.cfg.StateDir)
			if err != nil {
				a.log.Debug("reading the pod directories", "err", err)
				continue
			}
			pods, err := a.lister.List(labels.Everything())
			if err != nil {
				continue
			}
			live := map[types.UID]bool{}
			for _, p := range pods {
				live[p.UID] = true
			}
			a.orphans.mu.Lock()
			a.orphans.rescan = false
			a.orphans.mu.Unlock()
			a.removeDead(dirs, live)
			continue
		}
		for _, base := range retry {
			_, _, uid, _ := podfiles.ParseDirName(base)
			_ = a.removeOrphan(base, uid)
		}
	}
}

// nodeRef is the Node as kubelet refers to it in its events (UID = name).
func (a *Agent) nodeRef() *corev1.ObjectReference {
	return &corev1.ObjectReference{Kind: "Node", Name: a.cfg.NodeName, UID: types.UID(a.cfg.NodeName)}
}
