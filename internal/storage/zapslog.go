package storage

import (
	"context"
	"log/slog"
	"slices"
	"sync/atomic"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// etcd (server and client) logs through zap; dnsplane logs through slog. slogCore is a
// zap core that forwards to a slog.Logger so etcd's messages land in the same stream,
// with the same handler and format, as the rest of the process.
type slogCore struct {
	logger *slog.Logger
	// min drops etcd's chatty info-level startup and shutdown narrative.
	min   zapcore.Level
	attrs []slog.Attr
	// quiet, once set, demotes everything below DPanic to debug: etcd logs its own
	// listeners closing as errors even when we are the ones shutting it down.
	quiet *atomic.Bool
}

// newZapLogger returns a zap logger writing to logger at minLevel and above; quiet may be nil.
func newZapLogger(logger *slog.Logger, minLevel zapcore.Level, quiet *atomic.Bool) *zap.Logger {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if quiet == nil {
		quiet = new(atomic.Bool)
	}
	return zap.New(&slogCore{logger: logger, min: minLevel, quiet: quiet})
}

// benign lists warnings etcd emits on every start of our embedded configuration that
// ask nothing of the operator: the shared HTTP/gRPC port is loopback only, and simple
// auth tokens are unused because auth is off.
func benign(msg string) bool {
	switch msg {
	case "Running http and grpc server on single port. This is not recommended for production.",
		"simple token is not cryptographically signed":
		return true
	}
	return false
}

// level is the level an entry is logged at after demotions. Fatal and panic entries are
// never demoted: the process is about to stop and the message says why.
func (c *slogCore) level(e zapcore.Entry) zapcore.Level {
	if e.Level < zapcore.DPanicLevel && (c.quiet.Load() || benign(e.Message)) {
		return zapcore.DebugLevel
	}
	return e.Level
}

func slogLevel(l zapcore.Level) slog.Level {
	switch {
	case l <= zapcore.DebugLevel:
		return slog.LevelDebug
	case l == zapcore.InfoLevel:
		return slog.LevelInfo
	case l == zapcore.WarnLevel:
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}

func (c *slogCore) Enabled(l zapcore.Level) bool {
	return l >= c.min && c.logger.Enabled(context.Background(), slogLevel(l))
}

func (c *slogCore) With(fields []zapcore.Field) zapcore.Core {
	clone := *c
	clone.attrs = append(slices.Clip(c.attrs), attrsOf(fields)...)
	return &clone
}

func (c *slogCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(c.level(e)) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *slogCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	r := slog.NewRecord(e.Time, slogLevel(c.level(e)), e.Message, 0)
	r.AddAttrs(c.attrs...)
	r.AddAttrs(attrsOf(fields)...)
	if e.LoggerName != "" {
		r.AddAttrs(slog.String("logger", e.LoggerName))
	}
	return c.logger.Handler().Handle(context.Background(), r)
}

func (c *slogCore) Sync() error { return nil }

// attrsOf renders zap fields through zap's own map encoder, which knows every field
// type (durations, errors, stringers, arrays), and keeps their order.
func attrsOf(fields []zapcore.Field) []slog.Attr {
	if len(fields) == 0 {
		return nil
	}
	attrs := make([]slog.Attr, 0, len(fields))
	for _, f := range fields {
		enc := zapcore.NewMapObjectEncoder()
		f.AddTo(enc)
		keys := make([]string, 0, len(enc.Fields))
		for k := range enc.Fields {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			attrs = append(attrs, slog.Any(k, enc.Fields[k]))
		}
	}
	return attrs
}
