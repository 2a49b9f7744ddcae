package agent_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/agent"
	"github.com/dnsplane/dnsplane/internal/podfiles"
	"github.com/dnsplane/dnsplane/internal/testkit"
)

// readOnlyBind makes dir a read-only bind mount of itself: as root too,
// nothing under it can be created or removed (EROFS) and dir itself cannot
// be removed (EBUSY), as with a busy mount or a read-only state dir. The
// returned func undoes it (also at cleanup). Skips when mounting is not
// permitted.
func readOnlyBind(t *testing.T, dir string) (undo func()) {
	t.Helper()
	if err := unix.Mount(dir, dir, "", unix.MS_BIND, ""); err != nil {
		if errors.Is(err, unix.EPERM) {
			t.Skipf("bind mount needs CAP_SYS_ADMIN: %v", err)
		}
		t.Fatal(err)
	}
	var once sync.Once
	undo = func() {
		once.Do(func() {
			if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
				t.Errorf("unmount %s: %v", dir, err)
			}
		})
	}
	t.Cleanup(undo) // before t.TempDir's removal: cleanups run last first
	if err := unix.Mount("", dir, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
		t.Fatal(err)
	}
	return undo
}

// newFailureEnv is an API server, namespace ns and a state dir for one
// agent whose log is returned.
func newFailureEnv(t *testing.T) (*env, *testkit.Buffer) {
	t.Helper()
	e := newEnv(t)
	logs := &testkit.Buffer{}
	e.logger = slog.New(slog.NewTextHandler(logs, nil))
	return e, logs
}

func (e *env) nodeEvents(ctx context.Context, reason string) ([]corev1.Event, error) {
	list, err := e.srv.Client.CoreV1().Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []corev1.Event
	for _, ev := range list.Items {
		if ev.InvolvedObject.Kind == "Node" && ev.InvolvedObject.Name == nodeName && ev.Reason == reason {
			out = append(out, ev)
		}
	}
	return out, nil
}

// An agent restarted with a pod directory it cannot remove used to
// deadlock in the informer factory's shutdown (its error path waited for
// informers whose stop channel was closed only afterwards): nothing logged,
// every new pod Pending. Now the removal is retried, the failure logged
// with the path and a Warning on the Node, and pods are served.
func TestAgentUnremovableOrphan(t *testing.T) {
	t.Parallel()
	e, logs := newFailureEnv(t)
	orphan := podfiles.Dir(e.stateDir, ns, "gone", "00000000-dead")
	if err := os.MkdirAll(orphan, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(orphan, podfiles.ResolvConf), []byte("nameserver 1.1.1.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	undo := readOnlyBind(t, orphan)
	e.start()
	defer func() { e.stop() }()

	if !strings.Contains(logs.String(), orphan) || !strings.Contains(logs.String(), "read-only file system") {
		t.Errorf("the failed removal is not logged with its path and error:\n%s", logs)
	}
	poll(t, "the node's warning", func(ctx context.Context) error {
		evs, err := e.nodeEvents(ctx, agent.ReasonFailedRemoveOrphanedPodDir)
		if err != nil {
			return err
		}
		if len(evs) != 1 || evs[0].Type != corev1.EventTypeWarning || !strings.Contains(evs[0].Message, orphan) {
			return fmt.Errorf("events %+v", evs)
		}
		return nil
	})
	ctx := context.Background()
	p, err := e.dp.CoreV1().Pods(ns).Create(ctx, pod("new", dpcorev1.PodSpec{}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.waitRunning(p)

	// The mount goes: the next housekeeping pass removes the orphan.
	undo()
	poll(t, "orphan removed", func(context.Context) error {
		if _, err := os.Stat(orphan); !os.IsNotExist(err) {
			return fmt.Errorf("still there: %w", err)
		}
		return nil
	})
}

// fullTmpfs mounts a tmpfs of 64 KiB on dir and fills it: writing a file
// there fails with ENOSPC, as root too. The returned func frees the space.
func fullTmpfs(t *testing.T, dir string) (free func()) {
	t.Helper()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		if errors.Is(err, unix.EPERM) {
			t.Skipf("mount needs CAP_SYS_ADMIN: %v", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	filler := filepath.Join(dir, "filler")
	if err := os.WriteFile(filler, make([]byte, 1<<20), 0o644); !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("filling the tmpfs: %v", err)
	}
	return func() {
		if err := os.Remove(filler); err != nil {
			t.Error(err)
		}
	}
}

// A state dir that is read-only or full: a new pod gets kubelet's
// FailedCreatePodSandBox Warning (once, however often it is retried) and
// a False DNSConfigured condition naming the cause, stays Pending, and
// runs once the state dir is usable again. It used to stay Pending with
// nothing saying why.
func TestAgentStateDirUnusable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, podsDir string) (fix func())
		cause string
	}{
		{"read-only", readOnlyBind, "read-only file system"},
		{"full", fullTmpfs, "no space left on device"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, _ := newFailureEnv(t)
			e.start()
			defer func() { e.stop() }()
			ctx := context.Background()
			fix := tc.spoil(t, podfiles.PodsDir(e.stateDir))
			p, err := e.dp.CoreV1().Pods(ns).Create(ctx, pod("p", dpcorev1.PodSpec{}), metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			poll(t, "sandbox failure reported", func(ctx context.Context) error {
				got, err := e.dp.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				if got.Status.Phase != corev1.PodPending || got.Status.PodIP != "" {
					return fmt.Errorf("status %+v", got.Status)
				}
				cond := false
				for _, c := range got.Status.Conditions {
					cond = cond || (c.Type == agent.ConditionDNSConfigured && c.Status == corev1.ConditionFalse &&
						c.Reason == agent.ReasonFailedCreatePodSandBox && strings.Contains(c.Message, tc.cause))
				}
				if !cond {
					return fmt.Errorf("conditions %+v", got.Status.Conditions)
				}
				evs, err := e.events(ctx, p.Name, agent.ReasonFailedCreatePodSandBox)
				if err != nil {
					return err
				}
				if len(evs) != 1 || evs[0].Type != corev1.EventTypeWarning ||
					!strings.HasPrefix(evs[0].Message, "Failed to create pod sandbox: ") || !strings.Contains(evs[0].Message, tc.cause) {
					return fmt.Errorf("events %+v", evs)
				}
				return nil
			})
			fix()
			e.waitRunning(p)
			if evs, err := e.events(ctx, p.Name, agent.ReasonFailedCreatePodSandBox); err != nil || len(evs) != 1 || evs[0].Count != 1 {
				t.Errorf("retries emitted more events: %+v %v", evs, err)
			}
		})
	}
}
