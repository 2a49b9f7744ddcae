package shutdownlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

func TestHandler(t *testing.T) {
	t.Parallel()
	// The TTL controller's error at a stop, as client-go wraps it.
	patchCanceled := &wrapped{msg: `Patch "https://127.0.0.1:6443/api/v1/nodes/n1": context canceled`, err: context.Canceled}
	cases := []struct {
		name     string
		stopping bool
		level    slog.Level // the handler's
		err      error
		want     string // the record's level as printed, "" when dropped
	}{
		{"a cancellation while stopping is debug", true, slog.LevelDebug, patchCanceled, "level=DEBUG"},
		{"and dropped when debug is off", true, slog.LevelInfo, patchCanceled, ""},
		{"a deadline while stopping too", true, slog.LevelDebug, fmt.Errorf("list: %w", context.DeadlineExceeded), "level=DEBUG"},
		{"a cancellation before the stop stays an error", false, slog.LevelInfo, patchCanceled, "level=ERROR"},
		{"any error while stopping is debug", true, slog.LevelDebug, errors.New("Unable to sync caches"), "level=DEBUG"},
		{"another error before the stop stays an error", false, slog.LevelInfo, errors.New("conflict"), "level=ERROR"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			done := make(chan struct{})
			if tc.stopping {
				close(done)
			}
			h := New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tc.level}), done)
			// As upstream's controllers log: klog's contextual logger
			// over the component's slog handler, with values added.
			log := logr.FromSlogHandler(h).WithValues("logger", "UnhandledError")
			ctx := klog.NewContext(context.Background(), log)
			klog.FromContext(ctx).Error(tc.err, "Failed to process node TTL", "key", "n1")
			got := buf.String()
			switch {
			case tc.want == "" && got != "":
				t.Errorf("logged %q, want nothing", got)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Errorf("logged %q, want %s", got, tc.want)
			}
			if tc.want != "" && !strings.Contains(got, "logger=UnhandledError") {
				t.Errorf("logged %q, lost the logger's values", got)
			}
		})
	}
}

type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.err }
