package agent

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Pod condition and container ID of dnsplane's node agent
// (docs/agent.md, "There are no containers").
const (
	// ConditionDNSConfigured is True once the pod's resolv.conf and hosts
	// are written, False with the cause when they cannot be computed.
	ConditionDNSConfigured corev1.PodConditionType = "dnsplane.io/DNSConfigured"
	// ContainerIDPrefix starts every containerID the agent reports: there
	// is no runtime and no container behind it.
	ContainerIDPrefix = "dnsplane://no-container/"

	// ReasonFilesWritten is the DNSConfigured=True reason.
	ReasonFilesWritten = "FilesWritten"
	// ReasonFailedCreatePodSandBox is kubelet's event reason when a pod's
	// sandbox config (its DNS config among it) cannot be formed; it is
	// also the DNSConfigured=False reason.
	ReasonFailedCreatePodSandBox = "FailedCreatePodSandBox"

	// ReasonOutOfPods is kubelet's admission rejection when the node runs
	// status.capacity.pods pods already (pkg/kubelet/lifecycle/predicate.go,
	// OutOfPods): the pod's Event reason, status.reason and the
	// DNSConfigured=False reason.
	ReasonOutOfPods = "OutOfpods"
	// rejectedPrefix starts status.message of a pod kubelet rejects
	// (pkg/kubelet/kubelet.go, rejectPod); the Event has the message alone.
	rejectedPrefix = "Pod was rejected: "

	// ReasonFailedRemoveOrphanedPodDir is the Warning on the Node when the
	// directory of a pod that no longer exists cannot be removed (kubelet
	// only logs its "orphaned pod ... found, but error occurred when trying
	// to remove the pod directory"); the removal is retried.
	ReasonFailedRemoveOrphanedPodDir = "FailedRemoveOrphanedPodDir"

	// noContainersMessage is status.message of every pod the agent runs:
	// what a user who looks at a pod (or at a Job that never completes)
	// needs to know (docs/controllers.md, "Jobs").
	noContainersMessage = "dnsplane agent: no containers run on this node; the pod's resolv.conf and hosts are files under the agent's --state-dir; " +
		"its containers show as running until the pod is deleted, so a Job's pods never complete"
)

// statusInput is what the desired status depends on.
type statusInput struct {
	hostIP  string
	podIP   string      // "" when the sandbox failed
	failure *podFailure // why the pod's sandbox (files, IP) is not set up; nil when it is
	dir     string      // the pod's directory (for the condition message)
	now     metav1.Time
}

// podFailure is the cause a pod is not running: the DNSConfigured=False
// reason and message.
type podFailure struct{ reason, message string }

// outOfPodsMessage is kubelet's admission message for the pods resource
// (pkg/kubelet/lifecycle/predicate.go, InsufficientResourceError).
func outOfPodsMessage(used, capacity int) string {
	return fmt.Sprintf("Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d",
		corev1.ResourcePods, 1, used, capacity)
}

// rejectedStatus is the status of a pod rejected at admission, as kubelet's
// rejectPod sets it: phase Failed, its reason, "Pod was rejected: " and the
// message, qosClass kept; and the DNSConfigured=False condition saying the
// same. Others' conditions are kept.
func rejectedStatus(old corev1.PodStatus, reason, message string, now metav1.Time) corev1.PodStatus {
	s := corev1.PodStatus{QOSClass: old.QOSClass, Phase: corev1.PodFailed, Reason: reason, Message: rejectedPrefix + message}
	cond := corev1.PodCondition{Type: ConditionDNSConfigured, Status: corev1.ConditionFalse, Reason: reason, Message: message, LastTransitionTime: now}
	for _, o := range old.Conditions {
		switch {
		case o.Type != ConditionDNSConfigured:
			s.Conditions = append(s.Conditions, o)
		case o.Status == cond.Status:
			cond.LastTransitionTime = o.LastTransitionTime
		}
	}
	s.Conditions = append(s.Conditions, cond)
	return s
}

// desiredStatus is the status kubelet would report for pod: Running with
// every container started and ready once its sandbox (here: its files) is
// set up, Pending with the sandbox error otherwise. Times already in the
// pod's status are kept, so recomputing an unchanged pod gives an equal
// status and nothing is written.
func desiredStatus(pod *corev1.PodSpec, old corev1.PodStatus, in statusInput) corev1.PodStatus {
	// Start from the old status so fields others own (qosClass, set by the
	// API server; nominatedNodeName; resize) are kept.
	s := *old.DeepCopy()
	s.HostIP, s.HostIPs = in.hostIP, []corev1.HostIP{{IP: in.hostIP}}
	s.Message, s.Reason = noContainersMessage, ""
	s.ContainerStatuses, s.InitContainerStatuses = nil, nil
	if s.StartTime == nil {
		t := in.now
		s.StartTime = &t
	}
	ok := in.failure == nil
	if ok {
		s.Phase = corev1.PodRunning
		s.PodIP = in.podIP
		s.PodIPs = []corev1.PodIP{{IP: in.podIP}}
	} else {
		s.Phase = corev1.PodPending
		s.PodIP, s.PodIPs = "", nil
	}
	cond := func(t corev1.PodConditionType, status bool, reason, msg string) corev1.PodCondition {
		c := corev1.PodCondition{Type: t, Status: corev1.ConditionFalse, Reason: reason, Message: msg}
		if status {
			c.Status = corev1.ConditionTrue
		}
		c.LastTransitionTime = in.now
		for _, o := range old.Conditions {
			if o.Type == t && o.Status == c.Status {
				c.LastTransitionTime = o.LastTransitionTime
				c.LastProbeTime = o.LastProbeTime
			}
		}
		return c
	}
	notReady := ""
	if !ok {
		notReady = "ContainersNotReady"
	}
	dnsMsg := fmt.Sprintf("resolv.conf and hosts written to %s; there are no containers", in.dir)
	dnsReason := ReasonFilesWritten
	if !ok {
		dnsReason, dnsMsg = in.failure.reason, in.failure.message
	}
	ours := []corev1.PodCondition{
		cond(corev1.PodReadyToStartContainers, ok, "", ""),
		cond(corev1.PodInitialized, true, "", ""),
		cond(corev1.PodReady, ok, notReady, ""),
		cond(corev1.ContainersReady, ok, notReady, ""),
		cond(corev1.PodScheduled, true, "", ""),
		cond(ConditionDNSConfigured, ok, dnsReason, dnsMsg),
	}
	s.Conditions = ours
	for _, o := range old.Conditions { // readiness gates and others' conditions stay
		owned := false
		for _, c := range ours {
			owned = owned || c.Type == o.Type
		}
		if !owned {
			s.Conditions = append(s.Conditions, o)
		}
	}
	for _, c := range pod.Containers {
		cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image}
		if ok {
			cs.Ready, cs.Started = true, ptr.To(true)
			cs.ContainerID = ContainerIDPrefix + c.Name
			started := in.now
			for _, o := range old.ContainerStatuses {
				if o.Name == c.Name && o.State.Running != nil {
					started = o.State.Running.StartedAt
				}
			}
			cs.State.Running = &corev1.ContainerStateRunning{StartedAt: started}
		} else {
			cs.Started = ptr.To(false)
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
		}
		s.ContainerStatuses = append(s.ContainerStatuses, cs)
	}
	for _, c := range pod.InitContainers {
		// Init containers "ran to completion": there is nothing to run.
		cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image, Started: ptr.To(false)}
		if ok {
			cs.Ready = true
			cs.ContainerID = ContainerIDPrefix + c.Name
			cs.State.Terminated = &corev1.ContainerStateTerminated{
				Reason: "Completed", Message: "there are no containers", StartedAt: *s.StartTime, FinishedAt: *s.StartTime, ContainerID: cs.ContainerID,
			}
			for _, o := range old.InitContainerStatuses {
				if o.Name == c.Name && o.State.Terminated != nil {
					cs.State.Terminated.StartedAt, cs.State.Terminated.FinishedAt = o.State.Terminated.StartedAt, o.State.Terminated.FinishedAt
				}
			}
		} else {
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "PodInitializing"}
		}
		s.InitContainerStatuses = append(s.InitContainerStatuses, cs)
	}
	return s
}

// statusEqual reports whether writing want over have would change nothing.
func statusEqual(have, want corev1.PodStatus) bool {
	return apiequality.Semantic.DeepEqual(have, want)
}
