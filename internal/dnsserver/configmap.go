package dnsserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// CorefileKey is the ConfigMap key RunFromConfigMap serves.
const CorefileKey = "Corefile"

// configLoadFailures counts Corefiles from the ConfigMap that failed to load.
// It is in the default registry, which CoreDNS's prometheus plugin exposes.
var configLoadFailures = promauto.NewCounter(prometheus.CounterOpts{
	Name: "dnsplane_dns_config_load_failures_total",
	Help: "Corefiles from the watched ConfigMap that failed to load; the running configuration was kept.",
})

// RunFromConfigMap watches the ConfigMap namespace/name and serves its
// Corefile key until ctx ends.
//
// The first Corefile seen starts CoreDNS. A changed Corefile is applied with
// caddy's graceful restart, which hands the listeners of addresses present
// in both configurations to the new instance and stops the old one only
// once the new one has started. A Corefile that fails to load is logged,
// counted in dnsplane_dns_config_load_failures_total, and never replaces
// the running instance. A missing ConfigMap or key is logged and the
// running instance (if any) keeps serving until the key reappears.
//
// It returns nil once ctx ends and the instance has stopped.
func RunFromConfigMap(ctx context.Context, client kubernetes.Interface, namespace, name string, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if namespace == "" || name == "" {
		return errors.New("ConfigMap namespace and name are required")
	}
	logger = logger.With("configmap", namespace+"/"+name)
	w := &cmWatcher{logger: logger, wake: make(chan struct{}, 1)}

	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	cms := client.CoreV1().ConfigMaps(namespace)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return cms.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return cms.Watch(ctx, o)
		},
	}
	_, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &corev1.ConfigMap{},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { w.observe(obj) },
			UpdateFunc: func(_, obj any) { w.observe(obj) },
			DeleteFunc: func(any) { w.set(nil) },
		},
	})
	go ctrl.RunWithContext(ctx)
	logger.Info("waiting for ConfigMap")

	var (
		cur     *Server
		tried   bool   // a Corefile has been tried
		applied string // the last Corefile tried
	)
	defer func() {
		if cur != nil {
			_ = cur.Stop()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-w.wake:
		}
		st := w.get()
		switch {
		case !st.exists:
			logger.Warn("ConfigMap not found; waiting", "serving", cur != nil)
			continue
		case !st.hasKey:
			logger.Warn("ConfigMap has no "+CorefileKey+" key; waiting", "serving", cur != nil)
			continue
		case tried && st.corefile == applied:
			continue
		}
		tried, applied = true, st.corefile
		if cur == nil {
			srv, err := Start(ctx, st.corefile, logger)
			if err != nil {
				configLoadFailures.Inc()
				logger.Error("Corefile from ConfigMap failed to load; waiting for a change", "err", err)
				continue
			}
			cur = srv
			logger.Info("started CoreDNS from ConfigMap")
			continue
		}
		next, err := restart(cur, st.corefile, logger)
		if err != nil {
			configLoadFailures.Inc()
			logger.Error("new Corefile from ConfigMap failed to load; keeping the running one", "err", err)
			continue
		}
		cur = next
		logger.Info("reloaded CoreDNS from ConfigMap")
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
	s := &Server{inst: inst, logger: logger, done: make(chan struct{})}
	for _, a := range s.Addrs() {
		logger.Info("serving DNS", "addr", a.String(), "network", a.Network())
	}
	return s, nil
}

type cmState struct {
	exists, hasKey bool
	corefile       string
}

// cmWatcher keeps the latest observed ConfigMap state and wakes the apply
// loop; intermediate states the loop did not get to are skipped.
type cmWatcher struct {
	logger *slog.Logger
	mu     sync.Mutex
	st     cmState
	wake   chan struct{}
}

func (w *cmWatcher) observe(obj any) {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return
	}
	w.set(cm)
}

func (w *cmWatcher) set(cm *corev1.ConfigMap) {
	var st cmState
	if cm != nil {
		st.exists = true
		st.corefile, st.hasKey = cm.Data[CorefileKey]
	}
	w.mu.Lock()
	w.st = st
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *cmWatcher) get() cmState {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.st
}
