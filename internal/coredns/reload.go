package coredns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// configLoadFailures counts changed Corefiles that failed to load. It is in
// the default registry, which CoreDNS's prometheus plugin exposes.
var configLoadFailures = promauto.NewCounter(prometheus.CounterOpts{
	Name: "dnsplane_dns_config_load_failures_total",
	Help: "Corefiles from the watched file or ConfigMap that failed to load; the running configuration was kept.",
})

// RunFromFile serves the Corefile at path until ctx ends. Every interval
// (never when it is 0) it re-reads the file and applies a changed Corefile
// as RunFromConfigMap does: with a graceful restart that keeps the
// listeners, and never replacing the running instance with a Corefile that
// fails to load. The first Corefile must load.
func RunFromFile(ctx context.Context, path string, interval time.Duration, logger *slog.Logger) error {
	return RunFromFileWithOptions(ctx, path, FileOptions{Interval: interval, Logger: logger})
}

// FileOptions are RunFromFileWithOptions's options.
type FileOptions struct {
	// Interval is how often the file is re-read (never when 0).
	Interval time.Duration
	Logger   *slog.Logger
	// OnApply, when set, is called after every Corefile tried, the first
	// one included: err is nil when it serves.
	OnApply func(corefile string, err error)
}

// RunFromFileWithOptions is RunFromFile with options.
func RunFromFileWithOptions(ctx context.Context, path string, o FileOptions) error {
	logger, interval := o.Logger, o.Interval
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading Corefile: %w", err)
	}
	srv, err := Start(ctx, string(data), logger)
	if err != nil {
		return err
	}
	if o.OnApply != nil {
		o.OnApply(string(data), nil)
	}
	logger = logger.With("corefile", path)
	a := &applier{cur: srv, tried: true, applied: string(data), logger: logger, source: "file", onApply: o.OnApply}
	defer a.stop()
	var tick <-chan time.Time
	if interval > 0 {
		t := time.NewTicker(interval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick:
		}
		data, err := os.ReadFile(path)
		if err != nil {
			logger.Warn("cannot read the Corefile; keeping the running one", "err", err)
			continue
		}
		a.apply(ctx, string(data))
	}
}

// applier starts CoreDNS with the first Corefile that loads and applies
// later ones with a graceful restart.
type applier struct {
	logger *slog.Logger
	source string // where Corefiles come from, for logs

	cur     *Server // nil until a Corefile loaded
	tried   bool    // a Corefile has been tried
	applied string  // the last Corefile tried
	// onApply, when set, is told the outcome of every Corefile tried.
	onApply func(corefile string, err error)
}

func (a *applier) serving() bool { return a.cur != nil }

// apply loads corefile unless it is the one last tried (loaded or not).
func (a *applier) apply(ctx context.Context, corefile string) {
	if a.tried && corefile == a.applied {
		return
	}
	a.tried, a.applied = true, corefile
	if a.cur == nil {
		srv, err := Start(ctx, corefile, a.logger)
		a.report(corefile, err)
		if err != nil {
			configLoadFailures.Inc()
			a.logger.Error("Corefile from "+a.source+" failed to load; waiting for a change", "err", err)
			return
		}
		a.cur = srv
		a.logger.Info("started CoreDNS from " + a.source)
		return
	}
	next, err := restart(a.cur, corefile, a.logger)
	a.report(corefile, err)
	if err != nil {
		configLoadFailures.Inc()
		a.logger.Error("new Corefile from "+a.source+" failed to load; keeping the running one", "err", err)
		return
	}
	a.cur = next
	a.logger.Info("reloaded CoreDNS from " + a.source)
}

func (a *applier) report(corefile string, err error) {
	if a.onApply != nil {
		a.onApply(corefile, err)
	}
}

func (a *applier) stop() {
	if a.cur != nil {
		_ = a.cur.Stop()
	}
}

// restart applies corefile to old with caddy's graceful restart. On
// success old's instance has been stopped (old.Done is closed) and the
// returned Server owns the new one; on failure old keeps serving.
func restart(old *Server, corefile string, logger *slog.Logger) (*Server, error) {
	startMu.Lock()
	dnsserver.Directives = Directives()
	caddy.Quiet, dnsserver.Quiet = true, true
	inst, err := old.inst.Restart(caddy.CaddyfileInput{Contents: []byte(corefile), Filepath: "Corefile", ServerTypeName: "dns"})
	startMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("loading Corefile: %w", err)
	}
	// Restart recovers a panic in a plugin's setup and then returns
	// (nil, nil), or returns old's own instance when it gave up.
	if inst == nil || inst == old.inst {
		return nil, errors.New("loading Corefile: restart did not produce a new instance")
	}
	// Restart stopped old's instance and ran its shutdown callbacks; only
	// mark it as stopped.
	old.once.Do(func() { close(old.done) })
	// Add before removing, so that DryLoad never counts no instance while
	// one serves.
	live.add(inst)
	live.remove(old.inst)
	s := &Server{inst: inst, logger: logger, done: make(chan struct{})}
	for _, a := range s.Addrs() {
		logger.Info("serving DNS", "addr", a.String(), "network", a.Network())
	}
	return s, nil
}
