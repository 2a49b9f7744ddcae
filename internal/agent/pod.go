package agent

import (
	"context"
	"fmt"
	"os"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/podfiles"
	"github.com/dnsplane/dnsplane/internal/resolvconf"
)

// syncPod converges one pod key: files, IP, status and events for a live
// pod; cleanup and the final delete for a deleted one.
func (a *Agent) syncPod(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil // not ours to retry
	}
	pod, err := a.lister.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		a.cleanup(key)
		return nil
	}
	if err != nil {
		return err
	}
	if t, ok := a.tracked[key]; ok && t.uid != pod.UID {
		a.cleanup(key) // deleted and created again under the same name
	}
	if pod.Spec.NodeName != a.cfg.NodeName {
		return nil
	}
	if pod.DeletionTimestamp != nil {
		return a.finishDelete(ctx, key, pod)
	}
	if pod.Status.Phase == "Succeeded" || pod.Status.Phase == "Failed" {
		return nil // terminal: kubelet leaves it alone
	}
	return a.syncLivePod(ctx, key, pod)
}

// cleanup removes what the agent set up for a pod that is gone.
func (a *Agent) cleanup(key string) {
	t, ok := a.tracked[key]
	if !ok {
		return
	}
	// A directory that cannot be removed is an orphan now, retried by
	// housekeeping; the pod's IP is free either way.
	_ = a.removeOrphan(podfiles.DirName(t.namespace, t.name, t.uid), t.uid)
	a.ips.Release(t.uid)
	a.events.forget(t.uid)
	delete(a.tracked, key)
	a.log.Info("pod removed", "pod", key, "uid", t.uid)
}

// finishDelete is kubelet's side of a graceful delete: with the pod's
// "containers" (its files) gone, the pod object is deleted with a grace
// period of 0, only if it is still the same pod (UID precondition). A
// directory that cannot be removed does not hold the pod in Terminating:
// nothing runs in it, and housekeeping retries it as an orphan.
func (a *Agent) finishDelete(ctx context.Context, key string, pod *dpcorev1.Pod) error {
	_ = a.removeOrphan(podfiles.DirName(pod.Namespace, pod.Name, pod.UID), pod.UID)
	a.ips.Release(pod.UID)
	delete(a.tracked, key)
	uid := pod.UID
	err := a.dp.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To(int64(0)),
		Preconditions:      &metav1.Preconditions{UID: &uid},
	})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		// Gone already, or a new pod of the same name: its own sync handles it.
		err = nil
	}
	if err == nil {
		a.events.forget(uid)
		a.log.Info("pod deleted", "pod", key, "uid", uid)
	}
	return err
}

// syncLivePod writes the pod's files, gives it an IP and writes its status.
func (a *Agent) syncLivePod(ctx context.Context, key string, pod *dpcorev1.Pod) error {
	ref := podRef(pod.Namespace, pod.Name, pod.UID)
	dir := podfiles.Dir(a.cfg.StateDir, pod.Namespace, pod.Name, pod.UID)
	conf, warnings, dnsErr := resolvconf.ForPod(pod, a.node)
	var podIP string
	if dnsErr != nil {
		// kubelet fails the sandbox: no files, no IP. The pod keeps its
		// event and a False condition naming the cause.
		a.events.warnOnce(ref, ReasonFailedCreatePodSandBox, "Failed to create pod sandbox: "+dnsErr.Error())
		if err := removePodDir(a.cfg.StateDir, pod.Namespace, pod.Name, pod.UID); err != nil {
			return err
		}
		a.ips.Release(pod.UID)
		delete(a.tracked, key)
	} else {
		for _, w := range warnings {
			a.events.warnOnce(ref, w.Reason, w.Message)
		}
		if pod.Spec.HostNetwork {
			podIP = a.cfg.NodeIP
			a.ips.Release(pod.UID)
		} else {
			ip, err := a.ips.Allocate(pod.UID)
			if err != nil {
				return fmt.Errorf("pod IP: %w", err)
			}
			podIP = ip.String()
		}
		hosts, err := a.hostsFile(pod, podIP)
		if err != nil {
			return err
		}
		a.tracked[key] = trackedPod{namespace: pod.Namespace, name: pod.Name, uid: pod.UID}
		changed, err := writePodFiles(a.cfg.StateDir, pod.Namespace, pod.Name, pod.UID, podFiles{
			resolvConf: conf.RenderOrder(resolvconf.RuntimeOrder),
			hosts:      hosts,
		})
		if err != nil {
			return fmt.Errorf("writing pod files: %w", err)
		}
		if changed {
			a.log.Info("pod files written", "pod", key, "dir", dir)
		}
	}
	want := desiredStatus(&pod.Spec.PodSpec, pod.Status, statusInput{
		hostIP: a.cfg.NodeIP, podIP: podIP, dnsError: dnsErr, dir: dir,
		now: metav1.NewTime(a.clock.Now().Truncate(time.Second)),
	})
	if statusEqual(pod.Status, want) {
		return nil
	}
	p := pod.DeepCopy()
	p.Status = want
	if _, err := a.dp.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil // the delete event follows
		}
		return fmt.Errorf("updating pod status: %w", err)
	}
	return nil
}

func (a *Agent) hostsFile(pod *dpcorev1.Pod, podIP string) ([]byte, error) {
	if pod.Spec.HostNetwork {
		node, err := os.ReadFile(a.cfg.HostsFile)
		if err != nil {
			return nil, fmt.Errorf("the node's hosts file for a host-network pod: %w", err)
		}
		return hostNetworkHosts(node, pod.Spec.HostAliases), nil
	}
	hostname, domain := podHostname(&pod.Spec.PodSpec, pod.Name, pod.Namespace, a.cfg.ClusterDomain)
	return managedHosts([]string{podIP}, hostname, domain, pod.Spec.HostAliases), nil
}
