package agent

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"

	"k8s.io/component-helpers/apimachinery/lease"
)

// KubeletVersion is what the agent reports as nodeInfo.kubeletVersion.
const KubeletVersion = "dnsplane agent"

// UpNodeLabel marks a Node registered by an agent that `dnsplane up` runs
// (NodeLabels). A Node with it that the running `up` does not run is a
// leftover of an earlier `up` on the same data dir (README's one node,
// then the tour's three): up deletes it at start (docs/nodes.md).
const UpNodeLabel = "node.dnsplane.io/up"

// leaseNamespace is kubelet's node lease namespace.
const leaseNamespace = corev1.NamespaceNodeLease

// nodeObject is the Node as the agent registers it: spec and the parts of
// the status the agent owns. Conditions get their times from old.
func (a *Agent) nodeStatus(old corev1.NodeStatus, now metav1.Time) corev1.NodeStatus {
	s := *old.DeepCopy()
	pods := resource.NewQuantity(int64(a.ips.Capacity()), resource.DecimalSI)
	s.Capacity = corev1.ResourceList{corev1.ResourcePods: *pods}
	if cpu := runtime.NumCPU(); cpu > 0 {
		s.Capacity[corev1.ResourceCPU] = *resource.NewQuantity(int64(cpu), resource.DecimalSI)
	}
	if mem := memTotal(); mem > 0 {
		s.Capacity[corev1.ResourceMemory] = *resource.NewQuantity(mem, resource.BinarySI)
	}
	s.Allocatable = s.Capacity.DeepCopy()
	s.Addresses = []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: a.cfg.NodeIP},
		{Type: corev1.NodeHostName, Address: a.cfg.NodeName},
	}
	s.DaemonEndpoints = corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: a.cfg.DaemonPort}}
	s.NodeInfo.KubeletVersion = KubeletVersion
	s.NodeInfo.OperatingSystem = runtime.GOOS
	s.NodeInfo.Architecture = runtime.GOARCH
	s.NodeInfo.ContainerRuntimeVersion = "none://no-containers"
	if s.NodeInfo.MachineID == "" {
		if id, err := os.ReadFile("/etc/machine-id"); err == nil {
			s.NodeInfo.MachineID = strings.TrimSpace(string(id))
		}
	}
	// kubelet's node conditions, with its reasons and messages.
	type c struct {
		t           corev1.NodeConditionType
		status      corev1.ConditionStatus
		reason, msg string
	}
	want := []c{
		{corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
		{corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
		{corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
		{corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "dnsplane agent is posting ready status (no containers: pods get resolv.conf, hosts, an IP and a status)"},
	}
	var conds []corev1.NodeCondition
	for _, w := range want {
		nc := corev1.NodeCondition{Type: w.t, Status: w.status, Reason: w.reason, Message: w.msg, LastHeartbeatTime: now, LastTransitionTime: now}
		for _, o := range old.Conditions {
			if o.Type == w.t && o.Status == w.status {
				nc.LastTransitionTime = o.LastTransitionTime
			}
		}
		conds = append(conds, nc)
	}
	s.Conditions = conds
	return s
}

// memTotal is MemTotal of /proc/meminfo in bytes, 0 when unknown.
func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}

// registerNode creates the Node, or updates the one a previous run (or
// someone else) registered, and writes its status. It returns the Node.
// The node lifecycle and TTL controllers write the Node too (taints,
// annotations, conditions): a write that lost the race is done again on
// the Node as it is now, as kubelet retries its status updates.
func (a *Agent) registerNode(ctx context.Context) (*corev1.Node, error) {
	var node *corev1.Node
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var err error
		node, err = a.registerNodeOnce(ctx)
		return err
	})
	return node, err
}

func (a *Agent) registerNodeOnce(ctx context.Context) (*corev1.Node, error) {
	nodes := a.kube.CoreV1().Nodes()
	cidr := a.ips.Prefix().String()
	node, err := nodes.Get(ctx, a.cfg.NodeName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		node = &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name: a.cfg.NodeName,
				Labels: map[string]string{
					corev1.LabelHostname:   a.cfg.NodeName,
					corev1.LabelOSStable:   runtime.GOOS,
					corev1.LabelArchStable: runtime.GOARCH,
				},
			},
			Spec: corev1.NodeSpec{PodCIDR: cidr, PodCIDRs: []string{cidr}},
		}
		for k, v := range a.cfg.NodeLabels {
			node.Labels[k] = v
		}
		node, err = nodes.Create(ctx, node, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return a.registerNodeOnce(ctx)
		}
		if err != nil {
			return nil, fmt.Errorf("registering node %q: %w", a.cfg.NodeName, err)
		}
		a.log.Info("registered node", "podCIDR", cidr)
	case err != nil:
		return nil, fmt.Errorf("reading node %q: %w", a.cfg.NodeName, err)
	default:
		if node.Spec.PodCIDR != "" && node.Spec.PodCIDR != cidr {
			// spec.podCIDR cannot change once set (as upstream validates).
			return nil, fmt.Errorf("--pod-cidr %s: node %q already has spec.podCIDR %s", cidr, a.cfg.NodeName, node.Spec.PodCIDR)
		}
		changed := false
		if node.Spec.PodCIDR == "" {
			node.Spec.PodCIDR, node.Spec.PodCIDRs = cidr, []string{cidr}
			changed = true
		}
		// kubelet adds --node-labels to a Node it finds registered, too.
		for k, v := range a.cfg.NodeLabels {
			if node.Labels[k] != v {
				if node.Labels == nil {
					node.Labels = map[string]string{}
				}
				node.Labels[k] = v
				changed = true
			}
		}
		if changed {
			if node, err = nodes.Update(ctx, node, metav1.UpdateOptions{}); err != nil {
				return nil, fmt.Errorf("updating node %q: %w", a.cfg.NodeName, err)
			}
		}
	}
	return a.updateNodeStatus(ctx, node)
}

// updateNodeStatus writes the node's status (heartbeat times included).
func (a *Agent) updateNodeStatus(ctx context.Context, node *corev1.Node) (*corev1.Node, error) {
	now := metav1.NewTime(a.clock.Now().Truncate(time.Second))
	want := a.nodeStatus(node.Status, now)
	if apiequality.Semantic.DeepEqual(want, node.Status) {
		return node, nil
	}
	n := node.DeepCopy()
	n.Status = want
	out, err := a.kube.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("updating node %q status: %w", a.cfg.NodeName, err)
	}
	return out, nil
}

// runNodeStatus re-registers and heartbeats the node every StatusInterval,
// as kubelet reports its status; a deleted Node is created again.
func (a *Agent) runNodeStatus(ctx context.Context) {
	t := time.NewTicker(a.cfg.StatusInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := a.registerNode(ctx); err != nil && ctx.Err() == nil {
			a.log.Warn("node status", "err", err)
		}
	}
}

// newLeaseController is kubelet's node lease: kube-node-lease/<node>, held
// by the node name, owned by the Node (so it goes when the Node goes).
func (a *Agent) newLeaseController(kube kubernetes.Interface) lease.Controller {
	setOwner := func(l *coordinationv1.Lease) error {
		if len(l.OwnerReferences) > 0 {
			return nil
		}
		node, err := kube.CoreV1().Nodes().Get(a.runCtx, a.cfg.NodeName, metav1.GetOptions{})
		if err != nil {
			// kubelet logs and retries on the next renewal; so do we.
			a.log.Warn("node lease owner", "err", err)
			return nil
		}
		l.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: corev1.SchemeGroupVersion.String(),
			Kind:       "Node",
			Name:       node.Name,
			UID:        node.UID,
		}}
		return nil
	}
	return lease.NewController(clock.RealClock{}, kube, a.cfg.NodeName, a.cfg.LeaseDurationSeconds,
		func() { a.log.Warn("node lease: repeated renewal failures") },
		a.cfg.LeaseRenewInterval, a.cfg.NodeName, leaseNamespace, setOwner)
}
