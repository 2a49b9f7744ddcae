package coredns

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

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
	return RunFromConfigMapWithOptions(ctx, client, namespace, name, ConfigMapOptions{Logger: logger})
}

// ConfigMapOptions are RunFromConfigMapWithOptions's options.
type ConfigMapOptions struct {
	Logger *slog.Logger
	// OnApply, when set, is called after every Corefile tried: err is nil
	// when it serves. `dnsplane up` waits for the first one before it
	// reports the cluster DNS up, and reports which Corefile serves in the
	// DNS status.
	OnApply func(corefile string, err error)
	// FilesDir, when set, receives the ConfigMap's other keys as files
	// (the CA bundles the Corefile's TLS forwarders read), written before
	// each Corefile is applied; files of keys that are gone are removed.
	// A Corefile that depends on a file's content must change with it
	// (the DNS operator puts each bundle's hash in a comment), since
	// CoreDNS reads such files only at setup.
	FilesDir string
}

// RunFromConfigMapWithOptions is RunFromConfigMap with options.
func RunFromConfigMapWithOptions(ctx context.Context, client kubernetes.Interface, namespace, name string, o ConfigMapOptions) error {
	logger := o.Logger
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

	a := &applier{logger: logger, source: "ConfigMap", onApply: o.OnApply}
	defer a.stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-w.wake:
		}
		st := w.get()
		switch {
		case !st.exists:
			logger.Warn("ConfigMap not found; waiting", "serving", a.serving())
		case !st.hasKey:
			logger.Warn("ConfigMap has no "+CorefileKey+" key; waiting", "serving", a.serving())
		default:
			if o.FilesDir != "" {
				if err := writeFiles(o.FilesDir, st.files); err != nil {
					logger.Error("writing the ConfigMap's files; applying the Corefile anyway", "dir", o.FilesDir, "err", err)
				}
			}
			a.apply(ctx, st.corefile)
		}
	}
}

type cmState struct {
	exists, hasKey bool
	corefile       string
	// files are the other keys.
	files map[string]string
}

// writeFiles makes dir hold exactly files: each written to a temporary
// file and renamed, so a reader never sees half a file.
func writeFiles(dir string, files map[string]string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for name, data := range files {
		if name != filepath.Base(name) || strings.HasPrefix(name, ".") {
			continue // not a plain file name: ConfigMap keys are, but be sure
		}
		path := filepath.Join(dir, name)
		if cur, err := os.ReadFile(path); err == nil && string(cur) == data {
			continue
		}
		tmp, err := os.CreateTemp(dir, ".tmp-")
		if err != nil {
			return err
		}
		_, werr := tmp.WriteString(data)
		cerr := tmp.Close()
		if err := errors.Join(werr, cerr); err != nil {
			os.Remove(tmp.Name())
			return err
		}
		if err := os.Rename(tmp.Name(), path); err != nil {
			os.Remove(tmp.Name())
			return err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if _, ok := files[e.Name()]; !ok && !e.IsDir() {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	return nil
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
		for k, v := range cm.Data {
			if k != CorefileKey {
				if st.files == nil {
					st.files = map[string]string{}
				}
				st.files[k] = v
			}
		}
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
