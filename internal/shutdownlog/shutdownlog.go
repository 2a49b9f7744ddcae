// Package shutdownlog keeps a component's stop out of its error log.
//
// Upstream's controllers and scheduler, run in-process (internal/controllers,
// internal/scheduler), log through klog's contextual logger, which dnsplane
// points at the component's slog handler. When the component's context ends,
// its requests in flight and cache syncs are cut short and several report
// that at error level though nothing failed: the TTL controller's "Failed to
// process node TTL … context canceled", "Unable to sync caches", "Service
// account work item failed … context canceled". At a Ctrl-C of `up` these
// read as failures (TestCtrlCStopsCleanly). Handler logs every error-level
// record at debug level once the context is done, with stopping=true; an
// error before the stop stays an error. With --use-service-account-credentials
// each controller first fetches its service account's token, which widens the
// window in which a stop finds them starting (docs/controllers.md).
package shutdownlog

import (
	"context"
	"log/slog"
)

// Handler wraps a slog.Handler for a component that stops when Done closes.
type Handler struct {
	inner slog.Handler
	done  <-chan struct{}
}

// New returns a handler that passes records to inner, demoting errors once
// done is closed.
func New(inner slog.Handler, done <-chan struct{}) *Handler {
	return &Handler{inner: inner, done: done}
}

// Enabled implements slog.Handler.
func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

// Handle implements slog.Handler.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError && h.stopping() {
		if !h.inner.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		d := slog.NewRecord(r.Time, slog.LevelDebug, r.Message, r.PC)
		r.Attrs(func(a slog.Attr) bool { d.AddAttrs(a); return true })
		d.AddAttrs(slog.Bool("stopping", true))
		r = d
	}
	return h.inner.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &Handler{inner: h.inner.WithAttrs(attrs), done: h.done}
}

// WithGroup implements slog.Handler.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{inner: h.inner.WithGroup(name), done: h.done}
}

func (h *Handler) stopping() bool {
	select {
	case <-h.done:
		return true
	default:
		return false
	}
}
