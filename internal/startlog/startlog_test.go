package startlog

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestHandler(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	h := New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	log := slog.New(h).With("component", "etcd")
	child := log.WithGroup("g")

	log.Info("starting")
	log.Debug("detail")
	child.Info("child starting")
	log.Warn("slow disk")
	log.Error("failed")
	h.Started()
	log.Info("serving")
	child.Debug("child detail")

	out := buf.String()
	for _, tc := range []struct {
		msg  string
		want bool
	}{
		{"msg=starting", false},
		{"msg=detail", false},
		{`msg="child starting"`, false},
		{`msg="slow disk"`, true},
		{"msg=failed", true},
		{"msg=serving", true},
		{`msg="child detail"`, true},
	} {
		if got := strings.Contains(out, tc.msg); got != tc.want {
			t.Errorf("%s logged: %v, want %v\n%s", tc.msg, got, tc.want, out)
		}
	}
	if !strings.Contains(out, "component=etcd") {
		t.Errorf("attributes lost:\n%s", out)
	}
}
