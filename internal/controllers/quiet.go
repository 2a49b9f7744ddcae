package controllers

import (
	"context"
	"log/slog"
)

// stoppingHandler logs at debug level what upstream's controllers report
// as errors once stop has ended: a stop cancels their requests and cache
// syncs, and each one says so at error level ("Unable to sync caches",
// "Service account work item failed … context canceled") though nothing
// failed. A stop during start-up used to rarely catch them; with
// --use-service-account-credentials each controller first gets its
// service account, which widens that window (docs/controllers.md).
type stoppingHandler struct {
	slog.Handler
	stop context.Context
}

func (h stoppingHandler) level(l slog.Level) slog.Level {
	if l >= slog.LevelError && h.stop.Err() != nil {
		return slog.LevelDebug
	}
	return l
}

func (h stoppingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.Handler.Enabled(ctx, h.level(l))
}

func (h stoppingHandler) Handle(ctx context.Context, r slog.Record) error {
	if l := h.level(r.Level); l != r.Level {
		if !h.Handler.Enabled(ctx, l) {
			return nil
		}
		r.Level = l
	}
	return h.Handler.Handle(ctx, r)
}

func (h stoppingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return stoppingHandler{Handler: h.Handler.WithAttrs(attrs), stop: h.stop}
}

func (h stoppingHandler) WithGroup(name string) slog.Handler {
	return stoppingHandler{Handler: h.Handler.WithGroup(name), stop: h.stop}
}
