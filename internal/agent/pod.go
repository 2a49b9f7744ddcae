package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/podfiles"
	"github.com/dnsplane/dnsplane/internal/podsandbox"
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
		delete(a.admitted, key)
		return nil
	}
	if err != nil {
		return err
	}
	if t, ok := a.tracked[key]; ok && t.uid != pod.UID {
		a.cleanup(key) // deleted and created again under the same name
	}
	if uid, ok := a.admitted[key]; ok && uid != pod.UID {
		delete(a.admitted, key)
	}
	if pod.Spec.NodeName != a.cfg.NodeName {
		return nil
	}
	if pod.DeletionTimestamp != nil {
		return a.finishDelete(ctx, key, pod)
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		// Terminal: kubelet leaves it alone, and it no longer counts
		// against the pods capacity nor holds an IP (its sandbox is gone).
		delete(a.admitted, key)
		a.ips.Release(pod.UID)
		a.stopSandbox(pod.UID)
		return nil
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
	a.stopSandbox(t.uid)
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
	a.stopSandbox(pod.UID)
	_ = a.removeOrphan(podfiles.DirName(pod.Namespace, pod.Name, pod.UID), pod.UID)
	a.ips.Release(pod.UID)
	delete(a.tracked, key)
	delete(a.admitted, key)
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

// syncLivePod admits the pod, writes its files, gives it an IP and writes
// its status. A pod the node cannot run gets kubelet's answer, never a
// silent Pending (docs/agent.md, "When a pod cannot start"): over the
// pods capacity it is rejected (Failed, OutOfpods); a sandbox that cannot
// be set up (no resolv.conf can be formed, no IP left, the state dir
// read-only or full) is a FailedCreatePodSandBox Warning and a False
// DNSConfigured condition, and all but the first are retried.
func (a *Agent) syncLivePod(ctx context.Context, key string, pod *dpcorev1.Pod) error {
	now := metav1.NewTime(a.clock.Now().Truncate(time.Second))
	if !a.admit(key, pod) {
		return a.reject(ctx, key, pod, now)
	}
	ref := podRef(pod.Namespace, pod.Name, pod.UID)
	dir := podfiles.Dir(a.cfg.StateDir, pod.Namespace, pod.Name, pod.UID)
	conf, warnings, dnsErr := resolvconf.ForPod(pod, a.node)
	var (
		podIP   string
		failure *podFailure
		retry   error // returned, so the queue retries with backoff
	)
	if dnsErr != nil {
		// kubelet fails the sandbox: no files, no IP. The pod keeps its
		// event and a False condition naming the cause; retrying would
		// not change the spec.
		a.events.warnOnce(ref, ReasonFailedCreatePodSandBox, "Failed to create pod sandbox: "+dnsErr.Error())
		if err := removePodDir(a.cfg.StateDir, pod.Namespace, pod.Name, pod.UID); err != nil {
			// Files of an earlier --resolv-conf: the status still says why
			// the pod is not running; the removal is retried.
			retry = fmt.Errorf("removing the files of a pod whose resolv.conf cannot be formed: %w", err)
		}
		a.ips.Release(pod.UID)
		a.stopSandbox(pod.UID)
		delete(a.tracked, key)
		failure = &podFailure{ReasonFailedCreatePodSandBox, "the pod's resolv.conf cannot be formed: " + dnsErr.Error()}
	} else {
		for _, w := range warnings {
			a.events.warnOnce(ref, w.Reason, w.Message)
		}
		ip, err := a.setUpSandbox(key, pod, conf)
		if err != nil {
			// As kubelet reports a CNI or runtime failure; each distinct
			// message once, the retries aggregated by staying silent.
			msg := "Failed to create pod sandbox: " + err.Error()
			a.events.warnOnce(ref, ReasonFailedCreatePodSandBox, msg)
			retry = err
			if pod.Status.Phase == corev1.PodRunning {
				// It runs with the files it has (a rewrite failed):
				// kubelet never takes a started pod back to Pending.
				return retry
			}
			// Torn down as a failed sandbox is: the next try starts over.
			a.ips.Release(pod.UID)
			a.stopSandbox(pod.UID)
			if rmErr := removePodDir(a.cfg.StateDir, pod.Namespace, pod.Name, pod.UID); rmErr != nil {
				a.log.Debug("removing the failed pod sandbox", "pod", key, "err", rmErr)
			}
			failure = &podFailure{ReasonFailedCreatePodSandBox, msg}
		}
		podIP = ip
	}
	want := desiredStatus(&pod.Spec.PodSpec, pod.Status, statusInput{
		hostIP: a.cfg.NodeIP, podIP: podIP, failure: failure, dir: dir, now: now,
	})
	if err := a.writeStatus(ctx, pod, want); err != nil {
		return err
	}
	return retry
}

// setUpSandbox is the pod's "sandbox": its IP (host-local IPAM's part) and
// its resolv.conf and hosts (the runtime's part). It returns the pod IP.
func (a *Agent) setUpSandbox(key string, pod *dpcorev1.Pod, conf resolvconf.Config) (string, error) {
	var podIP string
	if pod.Spec.HostNetwork {
		podIP = a.cfg.NodeIP
		a.ips.Release(pod.UID)
	} else {
		ip, err := a.ips.Allocate(pod.UID)
		if err != nil {
			// host-local IPAM's words for its only range.
			return "", fmt.Errorf("failed to allocate for range 0: %w", err)
		}
		podIP = ip.String()
	}
	hosts, err := a.hostsFile(pod, podIP)
	if err != nil {
		return "", err
	}
	a.tracked[key] = trackedPod{namespace: pod.Namespace, name: pod.Name, uid: pod.UID}
	changed, err := writePodFiles(a.cfg.StateDir, pod.Namespace, pod.Name, pod.UID, podFiles{
		resolvConf: conf.RenderOrder(resolvconf.RuntimeOrder),
		hosts:      hosts,
	})
	if err != nil {
		return "", fmt.Errorf("writing the pod's resolv.conf and hosts: %w", err)
	}
	if changed {
		a.log.Info("pod files written", "pod", key, "dir", podfiles.Dir(a.cfg.StateDir, pod.Namespace, pod.Name, pod.UID))
	}
	return podIP, nil
}

// EnsureSandbox starts the sandbox of the node's pod uid unless it runs
// (podsandbox.Ensurer): the namespaces its exec sessions share, held from
// its first session until the pod goes, as a pause container holds them
// (docs/exec.md). Started with the first session rather than with the pod
// because each sandbox is a dnsplane process, some 20 MB (docs/exec.md,
// "When the sandbox starts").
func (a *Agent) EnsureSandbox(ctx context.Context, uid types.UID) error {
	if a.sandboxes == nil {
		return errors.New("this agent runs no pod sandboxes (it is not root)")
	}
	pod, err := a.runningPod(uid)
	if err != nil {
		return err
	}
	hostname, _ := podHostname(&pod.Spec.PodSpec, pod.Name, pod.Namespace, a.cfg.ClusterDomain)
	if err := a.sandboxes.Ensure(ctx, podsandbox.Pod{
		Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID, Hostname: hostname,
		Dir:     podfiles.Dir(a.cfg.StateDir, pod.Namespace, pod.Name, pod.UID),
		HostUTS: pod.Spec.HostNetwork,
	}); err != nil {
		return fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	// The worker may have stopped the pod's sandbox, finding it gone,
	// while this one started: stop it as the worker would have.
	if _, err := a.runningPod(uid); err != nil {
		a.sandboxes.Stop(uid)
		return err
	}
	return nil
}

// runningPod is the node's pod uid unless it is gone, going or finished.
func (a *Agent) runningPod(uid types.UID) (*dpcorev1.Pod, error) {
	pods, err := a.lister.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	for _, p := range pods {
		if p.UID != uid || p.Spec.NodeName != a.cfg.NodeName {
			continue
		}
		if p.DeletionTimestamp != nil || terminal(p) {
			return nil, fmt.Errorf("pod %s/%s is not running", p.Namespace, p.Name)
		}
		return p, nil
	}
	return nil, fmt.Errorf("no pod with UID %s on node %s", uid, a.cfg.NodeName)
}

func (a *Agent) stopSandbox(uid types.UID) {
	if a.sandboxes != nil {
		a.sandboxes.Stop(uid)
	}
}

// admit is kubelet's pods admission: a pod the agent has not admitted yet
// is admitted while fewer pods than status.capacity.pods (the usable
// addresses of --pod-cidr) are; host-network pods count too, as in
// kubelet. It reports whether the pod is admitted.
func (a *Agent) admit(key string, pod *dpcorev1.Pod) bool {
	if uid, ok := a.admitted[key]; ok && uid == pod.UID {
		return true
	}
	if len(a.admitted) >= a.ips.Capacity() {
		return false
	}
	a.admitted[key] = pod.UID
	return true
}

// reject is kubelet's rejectPod for a pod over the pods capacity: a
// Warning Event with the reason and message, and status Failed. The pod
// stays Failed, as in kubelet, even once a place frees up.
func (a *Agent) reject(ctx context.Context, key string, pod *dpcorev1.Pod, now metav1.Time) error {
	used, capacity := len(a.admitted), a.ips.Capacity()
	msg := outOfPodsMessage(used, capacity)
	a.log.Warn("pod rejected", "pod", key, "reason", ReasonOutOfPods, "message", msg)
	a.events.warnOnce(podRef(pod.Namespace, pod.Name, pod.UID), ReasonOutOfPods, msg)
	return a.writeStatus(ctx, pod, rejectedStatus(pod.Status, ReasonOutOfPods, msg, now))
}

// writeStatus writes want through the status subresource unless the pod
// has it already.
func (a *Agent) writeStatus(ctx context.Context, pod *dpcorev1.Pod, want corev1.PodStatus) error {
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
