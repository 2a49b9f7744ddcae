package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/dnsplane/dnsplane/internal/apiserver/store"
	"github.com/dnsplane/dnsplane/internal/storage"
)

// TestConcurrentPatchesWithoutResourceVersion: writers that do not send a
// resourceVersion never see a conflict, however many of them race on one
// object; every write lands.
func TestConcurrentPatchesWithoutResourceVersion(t *testing.T) {
	ts := sharedServer(t)
	ns := newNamespace(t, ts.client)
	tests := []struct {
		name             string
		pt               types.PatchType
		writers, patches int
		body             func(key string) string
		opts             func(writer int) metav1.PatchOptions
	}{
		{"merge", types.MergePatchType, 8, 60,
			func(key string) string { return `{"metadata":{"labels":{"` + key + `":"v"}}}` }, nil},
		{"json", types.JSONPatchType, 4, 15,
			func(key string) string { return `[{"op":"add","path":"/metadata/labels/` + key + `","value":"v"}]` }, nil},
		{"strategic", types.StrategicMergePatchType, 4, 15,
			func(key string) string { return `{"metadata":{"labels":{"` + key + `":"v"}}}` }, nil},
		// Each writer applies as its own manager, adding a label each time
		// to the ones it applied before.
		{"apply", types.ApplyPatchType, 4, 15, nil,
			func(writer int) metav1.PatchOptions {
				return metav1.PatchOptions{FieldManager: fmt.Sprintf("w%d", writer)}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "race-" + tt.name
			configMapWith(t, ts, ns, name, nil)
			// Unthrottled: client-go's default 5 requests a second would
			// make this test about the client.
			cfg := rest.CopyConfig(ts.config)
			cfg.QPS, cfg.Burst = 1e6, 1e6
			cms := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps(ns)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var wg sync.WaitGroup
			var failed atomic.Int32
			for w := range tt.writers {
				wg.Go(func() {
					applied := map[string]string{}
					for i := range tt.patches {
						key := fmt.Sprintf("w%d-%d", w, i)
						var body string
						var opts metav1.PatchOptions
						if tt.body != nil {
							body = tt.body(key)
						} else {
							applied[key] = "v"
							data, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
								"metadata": map[string]any{"name": name, "labels": applied}})
							body, opts = string(data), tt.opts(w)
						}
						if _, err := cms.Patch(ctx, name, tt.pt, []byte(body), opts); err != nil {
							failed.Add(1)
							t.Errorf("writer %d patch %d: %v", w, i, err)
							return
						}
					}
				})
			}
			wg.Wait()
			if failed.Load() > 0 {
				return
			}
			cm, err := cms.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for w := range tt.writers {
				for i := range tt.patches {
					if key := fmt.Sprintf("w%d-%d", w, i); cm.Labels[key] != "v" {
						t.Errorf("label %s lost: %d labels", key, len(cm.Labels))
						return
					}
				}
			}
		})
	}
}

// TestPatchPreconditionConflicts: a resourceVersion in the patch is a
// precondition, checked against the object every attempt: stale is a 409
// at once, never retried away. A JSON patch that removes it applies
// unconditionally, as upstream.
func TestPatchPreconditionConflicts(t *testing.T) {
	ts := sharedServer(t)
	ns := newNamespace(t, ts.client)
	stale := configMapWith(t, ts, ns, "pre", map[string]string{"a": "b"})
	cms := ts.client.CoreV1().ConfigMaps(ns)
	if _, err := cms.Patch(context.Background(), "pre", types.MergePatchType, []byte(`{"data":{"a":"c"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	const conflict = `Operation cannot be fulfilled on configmaps "pre": the object has been modified; please apply your changes to the latest version and try again`
	tests := []struct {
		name string
		pt   types.PatchType
		body string
		opts metav1.PatchOptions
		want string // "" = succeeds
	}{
		{"merge, stale", types.MergePatchType, `{"metadata":{"resourceVersion":"` + stale + `"},"data":{"x":"1"}}`, metav1.PatchOptions{}, conflict},
		{"strategic, stale", types.StrategicMergePatchType, `{"metadata":{"resourceVersion":"` + stale + `"},"data":{"x":"1"}}`, metav1.PatchOptions{}, conflict},
		{"json, stale", types.JSONPatchType, `[{"op":"replace","path":"/metadata/resourceVersion","value":"` + stale + `"}]`, metav1.PatchOptions{}, conflict},
		{"apply, stale", types.ApplyPatchType, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"pre","resourceVersion":"` + stale + `"},"data":{"x":"1"}}`,
			metav1.PatchOptions{FieldManager: "pre"}, conflict},
		{"json, resourceVersion removed", types.JSONPatchType, `[{"op":"remove","path":"/metadata/resourceVersion"},{"op":"add","path":"/data/y","value":"2"}]`, metav1.PatchOptions{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, err := cms.Get(context.Background(), "pre", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = cms.Patch(context.Background(), "pre", tt.pt, []byte(tt.body), tt.opts)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("got %v, want success", err)
			case tt.want != "" && (!apierrors.IsConflict(err) || err.Error() != tt.want):
				t.Errorf("got %v, want 409 %q", err, tt.want)
			case tt.want != "":
				requireUnchanged(t, ts, ns, "pre", before.ResourceVersion)
			}
		})
	}
}

// conflictStore is an objectStore holding one ConfigMap whose every
// update loses a compare-and-swap, to show that a patch retries until its
// request ends rather than a fixed number of times.
type conflictStore struct {
	objectStore // nil: only Get and Update are called
	value       []byte
	updates     atomic.Int32
}

func (c *conflictStore) Get(ctx context.Context, key string) (storage.KV, error) {
	if err := ctx.Err(); err != nil {
		return storage.KV{}, err
	}
	return storage.KV{Key: key, Value: c.value, ModRevision: 7}, nil
}

func (c *conflictStore) Update(context.Context, string, []byte, int64) (storage.KV, error) {
	c.updates.Add(1)
	return storage.KV{}, fmt.Errorf("updating: %w", storage.ErrConflict)
}

func TestPatchRetriesUntilTheRequestEnds(t *testing.T) {
	store := &conflictStore{value: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns","uid":"u"}}`)}
	s, err := New(Config{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, ctype, query, body string }{
		{"merge", mediaMergePatch, "", `{"data":{"a":"b"}}`},
		{"apply", mediaApplyPatch, "?fieldManager=m", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"b"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store.updates.Store(0)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			req := httptest.NewRequestWithContext(ctx, http.MethodPatch, "/api/v1/namespaces/ns/configmaps/c"+tt.query, strings.NewReader(tt.body))
			req.Header.Set("Content-Type", tt.ctype)
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, req)
			var st metav1.Status
			_ = json.Unmarshal(rec.Body.Bytes(), &st)
			if rec.Code != http.StatusGatewayTimeout || st.Reason != metav1.StatusReasonTimeout {
				t.Errorf("got %d %s %q, want 504 Timeout when the request ends", rec.Code, st.Reason, st.Message)
			}
			// The old handler gave up after 6 attempts.
			if n := store.updates.Load(); n <= 6 {
				t.Errorf("%d attempts before the request ended", n)
			}
		})
	}
}

func TestRetryConflictStopsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	if !store.RetryConflict(ctx, 1) {
		t.Fatal("retryConflict gave up on a live context")
	}
	cancel()
	start := time.Now()
	if store.RetryConflict(ctx, 60) {
		t.Fatal("retryConflict went on after the context ended")
	}
	if d := time.Since(start); d > 50*time.Millisecond {
		t.Errorf("retryConflict took %v to notice the context ended", d)
	}
}
