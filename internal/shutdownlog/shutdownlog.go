// Package shutdownlog keeps a component's stop out of its error log.
//
// Upstream's controllers and scheduler, run in-process (internal/controllers,
// internal/scheduler), log through klog's contextual logger, which dnsplane
// points at the component's slog handler. When the component's context ends,
// a controller's request in flight fails with "context canceled" and some
// report it at error level (the TTL controller's "Failed to process node
// TTL", through utilruntime.HandleErrorWithContext): at every Ctrl-C, `up`
// printed an error that is not one. Handler logs such records at debug level
// once the context is done; an error that is not a cancellation, or one
// before the stop, stays an error.
package shutdownlog

import (
	"context"
	"errors"
	"log/slog"
)

// Handler wraps a slog.Handler for a component that stops when Done closes.
type Handler struct {
	inner slog.Handler
	done  <-chan struct{}
}

// New returns a handler that passes records to inner, demoting errors that
// are cancellations once done is closed.
func New(inner slog.Handler, done <-chan struct{}) *Handler {
	return &Handler{inner: inner, done: done}
}

// Enabled implements slog.Handler.
func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

// Handle implements slog.Handler.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError && h.stopping() && canceled(r) {
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

// canceled reports whether an attribute of r is an error that is a
// context's cancellation or deadline.
func canceled(r slog.Record) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		if err, ok := a.Value.Any().(error); ok && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			found = true
			return false
		}
		return true
	})
	return found
}
