// Package startlog keeps a starting server's routine logs out of the way:
// until Started is called, only warnings and errors pass; afterwards every
// record at the configured level does. `dnsplane up` starts some forty
// components, each of which logs what it did at Info, so without it the
// banner a new user waits for came after about 140 lines (issue 29); the
// start-up progress ("started etcd in 0.31s") says what happens meanwhile,
// and `-v` asks for everything from the first line.
package startlog

import (
	"context"
	"log/slog"
	"sync/atomic"
)

// Handler passes records to the next handler: before Started only those
// at slog.LevelWarn or above.
type Handler struct {
	next    slog.Handler
	started *atomic.Bool
}

// New wraps next.
func New(next slog.Handler) *Handler {
	return &Handler{next: next, started: new(atomic.Bool)}
}

// Started lets every record through from now on, in this handler and every
// one derived from it with WithAttrs or WithGroup.
func (h *Handler) Started() { h.started.Store(true) }

// Enabled implements slog.Handler.
func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool {
	if l < slog.LevelWarn && !h.started.Load() {
		return false
	}
	return h.next.Enabled(ctx, l)
}

// Handle implements slog.Handler. slog.Logger asks Enabled first, but a
// caller holding the handler itself may not.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn && !h.started.Load() {
		return nil
	}
	return h.next.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &Handler{next: h.next.WithAttrs(attrs), started: h.started}
}

// WithGroup implements slog.Handler.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{next: h.next.WithGroup(name), started: h.started}
}
