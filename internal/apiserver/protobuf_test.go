package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// What client-go's clients of built-in kinds send (kube-controller-manager,
// kube-scheduler): protobuf first, JSON for the kinds without it.
const (
	acceptProtobufFirst = "application/vnd.kubernetes.protobuf,application/json"
	protobufMagic       = "k8s\x00"
)

// contentTypes records the Content-Type of every response a client gets.
type contentTypes struct {
	mu   sync.Mutex
	seen map[string]string // "METHOD path?query" → Content-Type
}

func (c *contentTypes) RoundTrip(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil {
			c.mu.Lock()
			c.seen[req.Method+" "+req.URL.RequestURI()] = resp.Header.Get("Content-Type")
			c.mu.Unlock()
		}
		return resp, err
	})
}

func (c *contentTypes) all() map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]string, len(c.seen))
	for k, v := range c.seen {
		out[k] = v
	}
	return out
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// protobufClient is a clientset configured as kube-controller-manager's:
// protobuf bodies, protobuf preferred in responses.
func protobufClient(t *testing.T, ts *testServer) (kubernetes.Interface, *contentTypes) {
	t.Helper()
	cfg := rest.CopyConfig(ts.config)
	cfg.ContentType = mediaProtobuf
	cfg.AcceptContentTypes = acceptProtobufFirst
	seen := &contentTypes{seen: map[string]string{}}
	cfg.Wrap(seen.RoundTrip)
	return kubernetes.NewForConfigOrDie(cfg), seen
}

// rawRequest sends one request with the given Accept header and returns the
// status, Content-Type and body.
func rawRequest(t *testing.T, ts *testServer, method, path, accept, body string) (int, string, []byte) {
	t.Helper()
	hc, err := rest.HTTPClientFor(ts.config)
	if err != nil {
		t.Fatal(err)
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, ts.config.Host+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", accept)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), data
}

// TestProtobufClientset: a clientset configured as kube-controller-manager's
// gets, lists and watches kinds with upstream's schema and every response is
// protobuf, the watch in kube's length-delimited stream framing.
func TestProtobufClientset(t *testing.T) {
	t.Parallel()
	ts := sharedServer(t)
	ctx := context.Background()
	ns := newNamespace(t, ts.client)
	c, seen := protobufClient(t, ts)
	nodeName := ns + "-node"
	t.Cleanup(func() { _ = ts.client.CoreV1().Nodes().Delete(context.Background(), nodeName, metav1.DeleteOptions{}) })

	type kind struct {
		name   string
		create func() error
		get    func() (runtime.Object, error)
		list   func() (runtime.Object, error)
		watch  func(rv string) (watch.Interface, error)
		update func() error
	}
	kinds := []kind{{
		name: "configmaps",
		create: func() error {
			_, err := c.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
			return err
		},
		get: func() (runtime.Object, error) { return c.CoreV1().ConfigMaps(ns).Get(ctx, "cm", metav1.GetOptions{}) },
		list: func() (runtime.Object, error) {
			return c.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		},
		watch: func(rv string) (watch.Interface, error) {
			return c.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
		},
		update: func() error {
			_, err := c.CoreV1().ConfigMaps(ns).Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"k": "w"}}, metav1.UpdateOptions{})
			return err
		},
	}, {
		name: "services",
		create: func() error {
			_, err := c.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc"},
				Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
			return err
		},
		get: func() (runtime.Object, error) { return c.CoreV1().Services(ns).Get(ctx, "svc", metav1.GetOptions{}) },
		list: func() (runtime.Object, error) {
			return c.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
		},
		watch: func(rv string) (watch.Interface, error) {
			return c.CoreV1().Services(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
		},
		update: func() error {
			s, err := c.CoreV1().Services(ns).Get(ctx, "svc", metav1.GetOptions{})
			if err != nil {
				return err
			}
			s.Labels = map[string]string{"x": "y"}
			_, err = c.CoreV1().Services(ns).Update(ctx, s, metav1.UpdateOptions{})
			return err
		},
	}, {
		name: "nodes",
		create: func() error {
			_, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName}}, metav1.CreateOptions{})
			return err
		},
		get: func() (runtime.Object, error) { return c.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{}) },
		list: func() (runtime.Object, error) {
			return c.CoreV1().Nodes().List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + nodeName})
		},
		watch: func(rv string) (watch.Interface, error) {
			return c.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{ResourceVersion: rv, FieldSelector: "metadata.name=" + nodeName})
		},
		update: func() error {
			n, err := c.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			n.Labels = map[string]string{"x": "y"}
			_, err = c.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
			return err
		},
	}, {
		name: "endpointslices",
		create: func() error {
			_, err := c.DiscoveryV1().EndpointSlices(ns).Create(ctx, &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "es"},
				AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}}}}, metav1.CreateOptions{})
			return err
		},
		get: func() (runtime.Object, error) {
			return c.DiscoveryV1().EndpointSlices(ns).Get(ctx, "es", metav1.GetOptions{})
		},
		list: func() (runtime.Object, error) {
			return c.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{})
		},
		watch: func(rv string) (watch.Interface, error) {
			return c.DiscoveryV1().EndpointSlices(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
		},
		update: func() error {
			s, err := c.DiscoveryV1().EndpointSlices(ns).Get(ctx, "es", metav1.GetOptions{})
			if err != nil {
				return err
			}
			s.Labels = map[string]string{"x": "y"}
			_, err = c.DiscoveryV1().EndpointSlices(ns).Update(ctx, s, metav1.UpdateOptions{})
			return err
		},
	}, {
		name: "events",
		create: func() error {
			_, err := c.CoreV1().Events(ns).Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "ev"},
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p", Namespace: ns}, Reason: "Test", Message: "m", Type: corev1.EventTypeNormal,
				Source: corev1.EventSource{Component: "test"}}, metav1.CreateOptions{})
			return err
		},
		get: func() (runtime.Object, error) { return c.CoreV1().Events(ns).Get(ctx, "ev", metav1.GetOptions{}) },
		list: func() (runtime.Object, error) {
			return c.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
		},
		watch: func(rv string) (watch.Interface, error) {
			return c.CoreV1().Events(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
		},
		update: func() error {
			e, err := c.CoreV1().Events(ns).Get(ctx, "ev", metav1.GetOptions{})
			if err != nil {
				return err
			}
			e.Count = 2
			_, err = c.CoreV1().Events(ns).Update(ctx, e, metav1.UpdateOptions{})
			return err
		},
	}}
	for _, k := range kinds {
		if err := k.create(); err != nil {
			t.Fatalf("%s: create: %v", k.name, err)
		}
		if _, err := k.get(); err != nil {
			t.Fatalf("%s: get: %v", k.name, err)
		}
		list, err := k.list()
		if err != nil {
			t.Fatalf("%s: list: %v", k.name, err)
		}
		lm, _ := list.(metav1.ListInterface)
		if lm == nil || lm.GetResourceVersion() == "" {
			t.Fatalf("%s: list without a resourceVersion: %#v", k.name, list)
		}
		w, err := k.watch(lm.GetResourceVersion())
		if err != nil {
			t.Fatalf("%s: watch: %v", k.name, err)
		}
		if err := k.update(); err != nil {
			w.Stop()
			t.Fatalf("%s: update: %v", k.name, err)
		}
		select {
		case e := <-w.ResultChan():
			if e.Type != watch.Modified {
				t.Errorf("%s: watch event %s %#v", k.name, e.Type, e.Object)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("%s: no watch event", k.name)
		}
		w.Stop()
	}
	var watches int
	for req, ct := range seen.all() {
		want := mediaProtobuf
		if strings.Contains(req, "watch=true") {
			want, watches = protobufStreamMediaType, watches+1
		}
		if ct != want {
			t.Errorf("%s: Content-Type %q, want %q", req, ct, want)
		}
	}
	if watches != len(kinds) {
		t.Errorf("saw %d watches, want %d", watches, len(kinds))
	}

	// The bytes themselves: kube's envelope, for a get and a list.
	for _, path := range []string{"/api/v1/namespaces/" + ns + "/configmaps/cm", "/apis/discovery.k8s.io/v1/namespaces/" + ns + "/endpointslices"} {
		code, ct, body := rawRequest(t, ts, http.MethodGet, path, acceptProtobufFirst, "")
		if code != http.StatusOK || ct != mediaProtobuf || !bytes.HasPrefix(body, []byte(protobufMagic)) {
			t.Errorf("GET %s: %d %q %q", path, code, ct, body)
		}
	}
}

// dnsParamsPod and dnsParamsDeployment carry dnsplane's spec.dnsParams,
// which upstream's protobuf schema cannot.
const (
	dnsParamsPod        = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"dnsPolicy":"Custom","dnsParams":{"custom":{"search":["a.b"]}},"containers":[{"name":"c","image":"x"}]}}`
	dnsParamsDeployment = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},"spec":{"dnsPolicy":"Custom","dnsParams":{"custom":{"search":["a.b"]}},"containers":[{"name":"c","image":"x"}]}}}}`
)

// TestProtobufDNSParamsKindsAnswerJSON: a pod template carrier asked for
// protobuf first answers JSON with its dnsParams, as kube-apiserver answers
// a custom resource: never a protobuf that drops the field.
func TestProtobufDNSParamsKindsAnswerJSON(t *testing.T) {
	t.Parallel()
	ts := sharedServer(t)
	ns := newNamespace(t, ts.client)
	for _, tc := range []struct{ collection, name, body string }{
		{"/api/v1/namespaces/" + ns + "/pods", "p", dnsParamsPod},
		{"/apis/apps/v1/namespaces/" + ns + "/deployments", "d", dnsParamsDeployment},
	} {
		if code, _, body := rawRequest(t, ts, http.MethodPost, tc.collection, "application/json", tc.body); code != http.StatusCreated {
			t.Fatalf("POST %s: %d %s", tc.collection, code, body)
		}
		for _, path := range []string{tc.collection + "/" + tc.name, tc.collection} {
			code, ct, body := rawRequest(t, ts, http.MethodGet, path, acceptProtobufFirst, "")
			if code != http.StatusOK || ct != "application/json" || !bytes.Contains(body, []byte(`"dnsParams":{"custom":{"search":["a.b"]}}`)) {
				t.Errorf("GET %s: %d %q %s", path, code, ct, body)
			}
		}
		// Asked for protobuf only, still JSON rather than a body that
		// loses the field.
		code, ct, _ := rawRequest(t, ts, http.MethodGet, tc.collection+"/"+tc.name, mediaProtobuf, "")
		if code != http.StatusOK || ct != "application/json" {
			t.Errorf("GET %s as protobuf only: %d %q", tc.collection, code, ct)
		}
	}
	// A protobuf client still reads them (client-go decodes what it gets),
	// and watches them as JSON.
	c, seen := protobufClient(t, ts)
	p, err := c.CoreV1().Pods(ns).Get(context.Background(), "p", metav1.GetOptions{})
	if err != nil || p.Spec.DNSPolicy != "Custom" {
		t.Fatalf("get pod: %v %v", p, err)
	}
	w, err := c.AppsV1().Deployments(ns).Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-w.ResultChan():
		if e.Type != watch.Added {
			t.Errorf("watch event %s %#v", e.Type, e.Object)
		}
	case <-time.After(10 * time.Second):
		t.Error("no watch event")
	}
	w.Stop()
	for req, ct := range seen.all() {
		if ct != "application/json" {
			t.Errorf("%s: Content-Type %q, want application/json", req, ct)
		}
	}
	// dnsplane's own kinds are served as CRDs are: JSON.
	if code, ct, body := rawRequest(t, ts, http.MethodGet, "/apis/operator.dnsplane.io/v1/dnses", acceptProtobufFirst, ""); code != http.StatusOK || ct != "application/json" {
		t.Errorf("GET dnses: %d %q %s", code, ct, body)
	}
}

// TestProtobufStatus: an error answering a client that prefers protobuf is a
// protobuf Status, as kube-apiserver's ErrorNegotiated writes it, whatever
// the kind; a client preferring JSON, or asking only for a transformation
// a Status is not, gets JSON.
func TestProtobufStatus(t *testing.T) {
	t.Parallel()
	ts := sharedServer(t)
	ns := newNamespace(t, ts.client)
	invalidCM := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"Not_A_Name"}}`
	for _, tc := range []struct {
		name, method, path, accept, body string
		code                             int
		reason                           metav1.StatusReason
		protobuf                         bool
	}{
		{"404 configmap", http.MethodGet, "/api/v1/namespaces/" + ns + "/configmaps/missing", acceptProtobufFirst, "", 404, metav1.StatusReasonNotFound, true},
		{"404 pod", http.MethodGet, "/api/v1/namespaces/" + ns + "/pods/missing", acceptProtobufFirst, "", 404, metav1.StatusReasonNotFound, true},
		{"422 configmap", http.MethodPost, "/api/v1/namespaces/" + ns + "/configmaps", acceptProtobufFirst, invalidCM, 422, metav1.StatusReasonInvalid, true},
		{"404 JSON", http.MethodGet, "/api/v1/namespaces/" + ns + "/configmaps/missing", "application/json", "", 404, metav1.StatusReasonNotFound, false},
		{"404 metadata only", http.MethodGet, "/api/v1/namespaces/" + ns + "/configmaps/missing",
			"application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", "", 404, metav1.StatusReasonNotFound, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, ct, body := rawRequest(t, ts, tc.method, tc.path, tc.accept, tc.body)
			if code != tc.code {
				t.Fatalf("status %d, want %d: %q", code, tc.code, body)
			}
			var st metav1.Status
			if tc.protobuf {
				if ct != mediaProtobuf {
					t.Fatalf("Content-Type %q, want protobuf: %q", ct, body)
				}
				obj, _, err := protobufSerializer.Decode(body, nil, &st)
				if err != nil || obj != &st {
					t.Fatalf("decoding %q: %v", body, err)
				}
			} else {
				if ct != "application/json" {
					t.Fatalf("Content-Type %q, want JSON: %q", ct, body)
				}
				if err := json.Unmarshal(body, &st); err != nil {
					t.Fatal(err)
				}
			}
			if st.Kind != "Status" || st.APIVersion != "v1" || int(st.Code) != tc.code || st.Reason != tc.reason {
				t.Errorf("status %+v", st)
			}
		})
	}
	// And client-go reads it: the protobuf clientset's error is the typed one.
	c, _ := protobufClient(t, ts)
	_, err := c.CoreV1().ConfigMaps(ns).Get(context.Background(), "missing", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("get missing: %v", err)
	}
	_, err = c.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "Not_A_Name"}}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `ConfigMap "Not_A_Name" is invalid`) {
		t.Errorf("create invalid: %v", err)
	}
}

// TestProtobufTransformations: metadata-only answers protobuf for every kind
// (metadata has upstream's schema, dnsplane's kinds included) and Tables stay
// JSON, as kube-apiserver serves them.
func TestProtobufTransformations(t *testing.T) {
	t.Parallel()
	ts := sharedServer(t)
	ns := newNamespace(t, ts.client)
	if code, _, body := rawRequest(t, ts, http.MethodPost, "/api/v1/namespaces/"+ns+"/pods", "application/json", dnsParamsPod); code != http.StatusCreated {
		t.Fatalf("creating pod: %d %s", code, body)
	}
	const (
		metaList  = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
		metaOne   = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
		tableBoth = "application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1,application/json;as=Table;g=meta.k8s.io;v=v1,application/json"
	)
	pods := "/api/v1/namespaces/" + ns + "/pods"
	for _, tc := range []struct {
		name, path, accept, ct, kind string
	}{
		{"metadata list of pods", pods, metaList, mediaProtobuf, "PartialObjectMetadataList"},
		{"metadata of a pod", pods + "/p", metaOne, mediaProtobuf, "PartialObjectMetadata"},
		{"metadata list of configmaps", "/api/v1/namespaces/" + ns + "/configmaps", metaList, mediaProtobuf, "PartialObjectMetadataList"},
		{"table of pods", pods, tableBoth, "application/json", "Table"},
		{"table of services", "/api/v1/namespaces/" + ns + "/services", tableBoth, "application/json", "Table"},
		// The first range kube-apiserver can answer wins.
		{"protobuf before table", "/api/v1/namespaces/" + ns + "/services", "application/vnd.kubernetes.protobuf,application/json;as=Table;g=meta.k8s.io;v=v1", mediaProtobuf, "ServiceList"},
		{"pods: table after protobuf", pods, "application/vnd.kubernetes.protobuf,application/json;as=Table;g=meta.k8s.io;v=v1", "application/json", "Table"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, ct, body := rawRequest(t, ts, http.MethodGet, tc.path, tc.accept, "")
			if code != http.StatusOK || ct != tc.ct {
				t.Fatalf("%d %q %q", code, ct, body)
			}
			var kind string
			if ct == mediaProtobuf {
				var u runtime.Unknown
				if !bytes.HasPrefix(body, []byte(protobufMagic)) || u.Unmarshal(body[len(protobufMagic):]) != nil {
					t.Fatalf("not kube's protobuf envelope: %q", body)
				}
				kind = u.Kind
				// The metadata carries dnsParams in their annotation
				// (docs/pod-dns.md, "dnsParams and controllers"); the spec
				// must not be there besides.
				meta := bytes.ReplaceAll(u.Raw, []byte(`{"custom":{"search":["a.b"]}}`), nil)
				if bytes.Contains(meta, []byte("a.b")) {
					t.Errorf("metadata-only body carries the spec: %q", u.Raw)
				}
			} else {
				var tm metav1.TypeMeta
				if err := json.Unmarshal(body, &tm); err != nil {
					t.Fatal(err)
				}
				kind = tm.Kind
			}
			if kind != tc.kind {
				t.Errorf("kind %q, want %q", kind, tc.kind)
			}
		})
	}
}

// TestProtobufMetadataWatch: a metadata informer's watch (the garbage
// collector's) streams protobuf PartialObjectMetadata, for dnsplane's kinds
// too, and the metadata client decodes it.
func TestProtobufMetadataWatch(t *testing.T) {
	t.Parallel()
	ts := sharedServer(t)
	ns := newNamespace(t, ts.client)
	if code, _, body := rawRequest(t, ts, http.MethodPost, "/api/v1/namespaces/"+ns+"/pods", "application/json", dnsParamsPod); code != http.StatusCreated {
		t.Fatalf("creating pod: %d %s", code, body)
	}
	hc, err := rest.HTTPClientFor(ts.config)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.config.Host+"/api/v1/namespaces/"+ns+"/pods?watch=true", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != protobufStreamMediaType {
		t.Fatalf("Content-Type %q", ct)
	}
	ev := readProtobufEvent(t, resp.Body)
	if ev.Type != string(watch.Added) {
		t.Errorf("event %q", ev.Type)
	}
	var p metav1.PartialObjectMetadata
	if _, _, err := protobufSerializer.Decode(ev.Object.Raw, nil, &p); err != nil || p.Name != "p" {
		t.Errorf("event object %+v: %v", p, err)
	}
}

// readProtobufEvent reads one frame of a protobuf watch: a 4-byte
// big-endian length, then a bare metav1.WatchEvent.
func readProtobufEvent(t *testing.T, r io.Reader) metav1.WatchEvent {
	t.Helper()
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, int(n[0])<<24|int(n[1])<<16|int(n[2])<<8|int(n[3]))
	if _, err := io.ReadFull(r, frame); err != nil {
		t.Fatal(err)
	}
	var ev metav1.WatchEvent
	if err := ev.Unmarshal(frame); err != nil {
		t.Fatalf("frame %q: %v", frame, err)
	}
	return ev
}

// TestProtobufInformer: a shared informer over a protobuf clientset, as
// kube-controller-manager runs them, syncs and sees what is created after.
func TestProtobufInformer(t *testing.T) {
	t.Parallel()
	ts := sharedServer(t)
	ns := newNamespace(t, ts.client)
	c, seen := protobufClient(t, ts)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := c.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	factory := informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithNamespace(ns))
	lister := factory.Core().V1().ConfigMaps().Lister()
	factory.Start(ctx.Done())
	defer func() {
		cancel() // Shutdown waits for the informers, which stop with ctx
		factory.Shutdown()
	}()
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("%v did not sync", typ)
		}
	}
	if _, err := c.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		cms, err := lister.List(labels.Everything())
		return len(cms) == 2, err
	})
	if err != nil {
		t.Fatalf("the informer did not see b: %v", err)
	}
	for req, ct := range seen.all() {
		if !strings.HasPrefix(ct, mediaProtobuf) {
			t.Errorf("%s: Content-Type %q", req, ct)
		}
	}
}

// TestNegotiateOutput is the negotiation table, kube-apiserver's answers.
func TestNegotiateOutput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		accept   string
		objProto bool
		want     output
		errProto bool
	}{
		{"", true, output{}, false},
		{"application/json", true, output{}, false},
		{acceptProtobufFirst, true, output{protobuf: true}, true},
		{acceptProtobufFirst, false, output{}, true},
		{mediaProtobuf, false, output{}, true},
		{"*/*", true, output{}, false},
		{"application/json;q=0.5,application/vnd.kubernetes.protobuf", true, output{protobuf: true}, true},
		{"application/vnd.kubernetes.protobuf;stream=watch", true, output{protobuf: true}, true},
		{"application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1,application/json;as=Table;g=meta.k8s.io;v=v1", true, output{as: tableKind, version: "v1"}, false},
		{"application/json;as=Table;g=meta.k8s.io;v=v1beta1", true, output{as: tableKind, version: "v1beta1"}, false},
		{"application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json", false, output{protobuf: true, as: partialListKind, version: "v1"}, false},
		{"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", true, output{as: partialKind, version: "v1"}, false},
		{"application/json;as=Table;g=meta.k8s.io;v=v2,application/vnd.kubernetes.protobuf", true, output{protobuf: true}, true},
		{"application/json;as=Other;g=meta.k8s.io;v=v1", true, output{}, false},
		{"application/yaml,application/vnd.kubernetes.protobuf", true, output{protobuf: true}, true},
	} {
		if got := negotiateOutput(tc.accept, tc.objProto); got != tc.want {
			t.Errorf("negotiateOutput(%q, %v) = %+v, want %+v", tc.accept, tc.objProto, got, tc.want)
		}
		if got := errorProtobuf(tc.accept); got != tc.errProto {
			t.Errorf("errorProtobuf(%q) = %v, want %v", tc.accept, got, tc.errProto)
		}
	}
}

// TestServesProtobuf: keyed on the Go type, so dnsplane's types (which have
// TypeMeta's promoted Marshal) never encode as protobuf, and every kind with
// a k8s.io/api type does, with no list of kinds.
func TestServesProtobuf(t *testing.T) {
	t.Parallel()
	for _, res := range NewRegistry().Resources() {
		pkg := reflect.TypeOf(res.New()).Elem().PkgPath()
		want := !strings.HasPrefix(pkg, "github.com/dnsplane/dnsplane/")
		if got := servesProtobuf(res); got != want {
			t.Errorf("%s (%s): servesProtobuf = %v, want %v", res.GVK, pkg, got, want)
		}
	}
}

// FuzzNegotiateOutput: any Accept header negotiates without panicking, and
// never to something the server cannot write: a Table is never protobuf, a
// kind without protobuf never gets plain protobuf, an error Status is never
// a transformation.
func FuzzNegotiateOutput(f *testing.F) {
	for _, seed := range []string{"", acceptProtobufFirst, "*/*;q=0.1,application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1",
		"application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1,application/json", `a/b;x="y,z";q=0.5`} {
		f.Add(seed, true)
		f.Add(seed, false)
	}
	f.Fuzz(func(t *testing.T, accept string, objectProtobuf bool) {
		out := negotiateOutput(accept, objectProtobuf)
		switch {
		case out.as == tableKind && out.protobuf:
			t.Errorf("%q: a protobuf Table", accept)
		case out.as == "" && out.protobuf && !objectProtobuf:
			t.Errorf("%q: protobuf for a kind without it", accept)
		case out.as != "" && out.version != "v1" && out.version != "v1beta1":
			t.Errorf("%q: %+v", accept, out)
		}
		_ = errorProtobuf(accept)
	})
}
