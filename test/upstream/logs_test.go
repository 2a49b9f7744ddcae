package upstream

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// failures are the log lines of an informer that cannot list or watch
// (client-go's reflector) and of a request for a resource the server does
// not serve.
var failures = regexp.MustCompile(`Failed to watch|failed to list|could not find the requested resource`)

// failingLines are the lines of log matching failures, each once.
func failingLines(log string) []string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if failures.MatchString(l) && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// syncLine matches client-go's "Waiting for caches to sync" and "Caches are
// synced" (k8s.io/client-go/tools/cache, WaitForNamedCacheSync and its
// contextual form). The key-value pairs after the message name the waiter
// when the caller gave a name; kube-controller-manager 1.37's contextual
// calls log none, so mostly the lines can only be counted.
var syncLine = regexp.MustCompile(`"(Waiting for caches to sync|Caches are synced)"(.*)$`)

// syncs counts the waits for caches in a log.
type syncs struct {
	started int
	// pending are the waits without their "Caches are synced", by the
	// waiter's key-value pairs ("" for an unnamed one).
	pending map[string]int
}

func (s syncs) waiting() int {
	n := 0
	for _, c := range s.pending {
		n += c
	}
	return n
}

func (s syncs) String() string {
	var names []string
	for who, n := range s.pending {
		if who == "" {
			who = "unnamed"
		}
		names = append(names, fmt.Sprintf("%s ×%d", who, n))
	}
	slices.Sort(names)
	return fmt.Sprintf("%d of %d waits for caches not synced (%s)", s.waiting(), s.started, strings.Join(names, "; "))
}

// countSyncs reads the waits for caches of log.
func countSyncs(log string) syncs {
	count := map[string]int{}
	out := syncs{pending: map[string]int{}}
	for _, l := range strings.Split(log, "\n") {
		m := syncLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		who := strings.TrimSpace(m[2])
		if m[1] == "Waiting for caches to sync" {
			count[who]++
			out.started++
		} else {
			count[who]--
		}
	}
	for who, n := range count {
		if n > 0 {
			out.pending[who] = n
		}
	}
	return out
}

// TestLogChecks runs the log checks over kube-controller-manager 1.37's
// lines (always: it needs no binaries).
func TestLogChecks(t *testing.T) {
	t.Parallel()
	const (
		wait   = `I1126 06:30:14.94 4424 shared_informer.go:524] "Waiting for caches to sync"`
		synced = `I1126 06:30:14.96 4424 shared_informer.go:531] "Caches are synced"`
		named  = `I1126 06:30:14.96 4424 shared_informer.go:503] "Waiting for caches to sync" controller="deployment"`
		failed = `E1126 06:42:40.24 25329 reflector.go:227] "Failed to watch" err="failed to list *v1.StorageVersionMigration: the server could not find the requested resource"`
	)
	for _, tt := range []struct {
		name             string
		log              string
		started, waiting int
		failing          int
	}{
		{"empty", "", 0, 0, 0},
		{"all synced", strings.Join([]string{wait, wait, synced, synced}, "\n"), 2, 0, 0},
		{"one waits", strings.Join([]string{wait, wait, synced}, "\n"), 2, 1, 0},
		{"named waits apart", strings.Join([]string{named, wait, synced}, "\n"), 2, 1, 0},
		{"failure once however often", strings.Join([]string{wait, failed, failed}, "\n"), 1, 1, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := countSyncs(tt.log)
			if s.started != tt.started || s.waiting() != tt.waiting {
				t.Errorf("countSyncs: %v, want %d of %d waiting", s, tt.waiting, tt.started)
			}
			if got := failingLines(tt.log); len(got) != tt.failing {
				t.Errorf("failingLines: %q, want %d", got, tt.failing)
			}
		})
	}
}
