package podserver

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// APILookup finds pods through the API server: one GET per exec, which
// is rare next to what the agent's informer costs.
type APILookup struct{ Client kubernetes.Interface }

// Pod implements PodLookup.
func (l APILookup) Pod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	p, err := l.Client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("pod %s/%s: %w", namespace, name, ErrPodNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("pod %s/%s: %w", namespace, name, err)
	}
	return p, nil
}
