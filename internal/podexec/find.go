package podexec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/dnsplane/dnsplane/internal/nodeplan"
	"github.com/dnsplane/dnsplane/internal/podfiles"
)

// DefaultStateDir is the agent's state dir when neither --state-dir nor
// --data-dir says otherwise.
const DefaultStateDir = "/var/lib/dnsplane/agent"

// StateDirFor is the agent state dir `dnsplane exec` reads for a pod on
// node: stateDir when set, else under dataDir the node's own (where
// `dnsplane up` runs its agents: <dataDir>/nodes/<node> with several nodes,
// <dataDir>/agent with one; nodeplan.StateDirOf), else DefaultStateDir.
func StateDirFor(stateDir, dataDir string) func(node string) string {
	return func(node string) string {
		switch {
		case stateDir != "":
			return stateDir
		case dataDir != "":
			return nodeplan.StateDirOf(dataDir, node)
		}
		return DefaultStateDir
	}
}

// FindPodDir looks the pod up through the API and returns its directory
// under the state dir of its node (stateDirOf(spec.nodeName)), with both
// files present, and the pod (whose securityContext says who the command
// runs as, IdentityOf). The errors say what is wrong in the user's terms: no such
// pod, being deleted, or no files yet.
func FindPodDir(ctx context.Context, c kubernetes.Interface, stateDirOf func(node string) string, namespace, name string) (string, *corev1.Pod, error) {
	pod, err := c.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil, fmt.Errorf("pod %s/%s not found", namespace, name)
	}
	if err != nil {
		return "", nil, fmt.Errorf("getting pod %s/%s: %w", namespace, name, err)
	}
	if pod.DeletionTimestamp != nil {
		return "", nil, fmt.Errorf("pod %s/%s is being deleted", namespace, name)
	}
	stateDir := stateDirOf(pod.Spec.NodeName)
	dir := podfiles.Dir(stateDir, namespace, name, pod.UID)
	if err := CheckFiles(dir); err != nil {
		what := "files"
		var pe *os.PathError
		if errors.As(err, &pe) && errors.Is(err, os.ErrNotExist) {
			what = filepath.Base(pe.Path)
		}
		if pod.Spec.NodeName == "" {
			return "", nil, fmt.Errorf("pod %s/%s has no %s yet: it is not scheduled to a node (spec.nodeName is empty)", namespace, name, what)
		}
		return "", nil, fmt.Errorf("pod %s/%s has no %s yet in %s: is its node's agent running? (spec.nodeName=%s)", namespace, name, what, stateDir, pod.Spec.NodeName)
	}
	return dir, pod, nil
}
