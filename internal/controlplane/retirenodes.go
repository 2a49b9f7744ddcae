package controlplane

import (
	"context"
	"fmt"
	"log/slog"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/dnsplane/dnsplane/internal/agent"
)

// retireNodes deletes the Nodes an earlier `up` on this data dir ran
// (agent.UpNodeLabel) that no role of this one runs: `up` then `up --nodes
// 3` would otherwise leave node `dnsplane` NotReady for ever, with its pods
// stuck on it, and `kubectl wait --for=condition=Ready node --all` would
// never return. Deleting the Node is what a cloud's node controller does
// for a machine that is gone; upstream's pod garbage collector then
// deletes the pods bound to it. Nodes without the label (an agent run by
// hand, `dnsplane agent`) are left alone.
func retireNodes(ctx context.Context, loopback *rest.Config, roles []Role, log *slog.Logger) error {
	kube, err := kubernetes.NewForConfig(loopback)
	if err != nil {
		return fmt.Errorf("retiring earlier nodes: %w", err)
	}
	nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: agent.UpNodeLabel})
	if err != nil {
		return fmt.Errorf("retiring earlier nodes: listing them: %w", err)
	}
	for _, n := range nodes.Items {
		if runsNode(roles, n.Name) {
			continue
		}
		err := kube.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &n.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("retiring node %q of an earlier up: %w", n.Name, err)
		}
		log.Info("deleted a node an earlier up on this data dir ran", "node", n.Name)
	}
	return nil
}

func runsNode(roles []Role, node string) bool {
	for _, r := range roles {
		if nr, ok := r.(NodeRunner); ok && nr.RunsNode(node) {
			return true
		}
	}
	return false
}
