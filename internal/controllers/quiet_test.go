package controllers

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

// TestStoppingHandler: errors are errors while the controllers run, and
// debug once their stop began; other levels are kept.
func TestStoppingHandler(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		stopped bool
		level   slog.Level
		want    string // "" not logged at info level
	}{
		{"error while running", false, slog.LevelError, "level=ERROR"},
		{"error once stopping", true, slog.LevelError, ""},
		{"info once stopping", true, slog.LevelInfo, "level=INFO"},
		{"warning once stopping", true, slog.LevelWarn, "level=WARN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tc.stopped {
				cancel()
			}
			var b bytes.Buffer
			log := slog.New(stoppingHandler{Handler: slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelInfo}), stop: ctx}).With("component", "controllers")
			log.Log(t.Context(), tc.level, "msg")
			switch got := b.String(); {
			case tc.want == "" && got != "":
				t.Errorf("logged %q", got)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Errorf("logged %q, want %s", got, tc.want)
			}
		})
	}
	// At debug level it is still there, as debug.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var b bytes.Buffer
	slog.New(stoppingHandler{Handler: slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug}), stop: ctx}).Error("msg")
	if !strings.Contains(b.String(), "level=DEBUG") {
		t.Errorf("logged %q, want it at debug", b.String())
	}
}
