package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// testServer is one API server with embedded etcd in a temp dir, shared by
// the tests of this file because etcd takes a while to start.
type testServer struct {
	run    *testRunning
	config *rest.Config
	client kubernetes.Interface
	dir    string
}

var (
	sharedOnce sync.Once
	shared     *testServer
	sharedErr  error
)

func (ts *testServer) stop(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ts.run.Stop(ctx); err != nil {
		t.Errorf("stopping: %v", err)
	}
}

// sharedServer returns the package's shared server (stopped by TestMain).
func sharedServer(t *testing.T) *testServer {
	t.Helper()
	sharedOnce.Do(func() {
		dir, err := os.MkdirTemp("", "dnsplane-apiserver-test")
		if err != nil {
			sharedErr = err
			return
		}
		shared = startTestServer(t, dir, "")
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = shared.run.Stop(ctx)
		cancel()
		os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

func newNamespace(t *testing.T, c kubernetes.Interface) string {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 50 {
		name = name[:50]
	}
	name = strings.Trim(name, "-") + "-" + fmt.Sprint(time.Now().UnixNano()%100000)
	if _, err := c.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	return name
}

func pod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}}}
}

func TestPodCRUD(t *testing.T) {
	ts := sharedServer(t)
	ctx := context.Background()
	ns := newNamespace(t, ts.client)
	pods := ts.client.CoreV1().Pods(ns)

	created, err := pods.Create(ctx, pod("p1"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.UID == "" || created.ResourceVersion == "" || created.CreationTimestamp.IsZero() {
		t.Errorf("server metadata missing: %+v", created.ObjectMeta)
	}
	if created.Spec.DNSPolicy != corev1.DNSClusterFirst || created.Status.Phase != corev1.PodPending {
		t.Errorf("defaults: dnsPolicy %q phase %q", created.Spec.DNSPolicy, created.Status.Phase)
	}

	_, err = pods.Create(ctx, pod("p1"), metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) || err.Error() != `pods "p1" already exists` {
		t.Errorf("duplicate create: %v", err)
	}

	got, err := pods.Get(ctx, "p1", metav1.GetOptions{})
	if err != nil || got.UID != created.UID {
		t.Fatalf("get: %v %v", got, err)
	}

	got.Labels["tier"] = "front"
	updated, err := pods.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if updated.ResourceVersion == got.ResourceVersion || updated.UID != created.UID {
		t.Errorf("update did not move the resourceVersion: %s", updated.ResourceVersion)
	}

	// A stale resourceVersion is a conflict with upstream's message.
	got.Labels["tier"] = "back"
	_, err = pods.Update(ctx, got, metav1.UpdateOptions{})
	want := `Operation cannot be fulfilled on pods "p1": the object has been modified; please apply your changes to the latest version and try again`
	if !apierrors.IsConflict(err) || err.Error() != want {
		t.Errorf("stale update: %v", err)
	}

	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "tier=front"})
	if err != nil || len(list.Items) != 1 || list.ResourceVersion == "" {
		t.Fatalf("list: %+v %v", list, err)
	}
	if list, err = pods.List(ctx, metav1.ListOptions{LabelSelector: "tier=none"}); err != nil || len(list.Items) != 0 {
		t.Errorf("list with selector: %+v %v", list, err)
	}
	if _, err = pods.List(ctx, metav1.ListOptions{LabelSelector: "a in (b"}); !apierrors.IsBadRequest(err) {
		t.Errorf("bad selector: %v", err)
	}
	if _, err = pods.List(ctx, metav1.ListOptions{FieldSelector: "spec.bogus=x"}); !apierrors.IsBadRequest(err) {
		t.Errorf("bad field selector: %v", err)
	}

	if err := pods.Delete(ctx, "p1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = pods.Get(ctx, "p1", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) || err.Error() != `pods "p1" not found` {
		t.Errorf("get after delete: %v", err)
	}
}

func TestCreateInMissingNamespace(t *testing.T) {
	ts := sharedServer(t)
	_, err := ts.client.CoreV1().Pods("nope").Create(context.Background(), pod("p"), metav1.CreateOptions{})
	if !apierrors.IsNotFound(err) || err.Error() != `namespaces "nope" not found` {
		t.Errorf("err = %v", err)
	}
}

func TestPodDNSValidation(t *testing.T) {
	ts := sharedServer(t)
	ns := newNamespace(t, ts.client)
	p := pod("bad")
	p.Spec.DNSPolicy = "Bogus"
	_, err := ts.client.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{})
	want := `Pod "bad" is invalid: spec.dnsPolicy: Unsupported value: "Bogus": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None", "Custom", "ClusterFirstWithAutopath"`
	if !apierrors.IsInvalid(err) || err.Error() != want {
		t.Fatalf("err = %v", err)
	}
	causes := err.(apierrors.APIStatus).Status().Details.Causes
	if len(causes) != 1 || causes[0].Field != "spec.dnsPolicy" {
		t.Errorf("causes = %+v", causes)
	}
}

func TestServiceClusterIPs(t *testing.T) {
	ts := sharedServer(t)
	ctx := context.Background()
	ns := newNamespace(t, ts.client)
	svcs := ts.client.CoreV1().Services(ns)
	mk := func(name, ip string, typ corev1.ServiceType) *corev1.Service {
		s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ServiceSpec{ClusterIP: ip, Type: typ,
			Ports: []corev1.ServicePort{{Port: 80}}}}
		if typ == corev1.ServiceTypeExternalName {
			s.Spec.ExternalName, s.Spec.Ports = "example.com", nil
		}
		return s
	}
	a, err := svcs.Create(ctx, mk("a", "", ""), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(a.Spec.ClusterIP, "10.") || a.Spec.Type != corev1.ServiceTypeClusterIP || a.Spec.Ports[0].TargetPort.IntValue() != 80 {
		t.Errorf("service a: %+v", a.Spec)
	}
	if _, err := svcs.Create(ctx, mk("b", a.Spec.ClusterIP, ""), metav1.CreateOptions{}); !apierrors.IsInvalid(err) ||
		!strings.Contains(err.Error(), "provided IP is already allocated") {
		t.Errorf("taken IP: %v", err)
	}
	h, err := svcs.Create(ctx, mk("headless", "None", ""), metav1.CreateOptions{})
	if err != nil || h.Spec.ClusterIP != "None" {
		t.Errorf("headless: %+v %v", h, err)
	}
	e, err := svcs.Create(ctx, mk("ext", "", corev1.ServiceTypeExternalName), metav1.CreateOptions{})
	if err != nil || e.Spec.ClusterIP != "" {
		t.Errorf("external name: %+v %v", e, err)
	}
	// Deleting releases the address: a new Service may take it.
	if err := svcs.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := svcs.Create(ctx, mk("c", a.Spec.ClusterIP, ""), metav1.CreateOptions{}); err != nil {
		t.Errorf("reusing a released IP: %v", err)
	}
}

func TestPatchTypes(t *testing.T) {
	ts := sharedServer(t)
	ctx := context.Background()
	ns := newNamespace(t, ts.client)
	deploys := ts.client.AppsV1().Deployments(ns)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}, {Name: "side", Image: "busybox"}}}}}}
	created, err := deploys.Create(ctx, d, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *created.Spec.Replicas != 1 || created.Generation != 1 {
		t.Errorf("defaults: replicas %d generation %d", *created.Spec.Replicas, created.Generation)
	}
	// Strategic merge: containers merge by name.
	p, err := deploys.Patch(ctx, "web", types.StrategicMergePatchType, []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.28"}]}}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Spec.Template.Spec.Containers) != 2 || p.Spec.Template.Spec.Containers[0].Image != "nginx:1.28" || p.Generation != 2 {
		t.Errorf("strategic merge: %+v generation %d", p.Spec.Template.Spec.Containers, p.Generation)
	}
	// Merge patch: lists are replaced.
	p, err = deploys.Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{})
	if err != nil || *p.Spec.Replicas != 3 {
		t.Fatalf("merge patch: %v", err)
	}
	// JSON patch.
	p, err = deploys.Patch(ctx, "web", types.JSONPatchType, []byte(`[{"op":"add","path":"/metadata/labels","value":{"x":"y"}}]`), metav1.PatchOptions{})
	if err != nil || p.Labels["x"] != "y" {
		t.Fatalf("json patch: %v", err)
	}
	_, err = deploys.Patch(ctx, "web", types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/nothere"}]`), metav1.PatchOptions{})
	if err == nil || apierrors.ReasonForError(err) != metav1.StatusReasonInvalid {
		t.Errorf("failing json patch: %v", err)
	}
	// Status is not changed through the main resource.
	p, err = deploys.Patch(ctx, "web", types.MergePatchType, []byte(`{"status":{"replicas":9}}`), metav1.PatchOptions{})
	if err != nil || p.Status.Replicas != 0 {
		t.Errorf("status via main resource: %+v %v", p.Status, err)
	}
	p, err = deploys.Patch(ctx, "web", types.MergePatchType, []byte(`{"status":{"replicas":9}}`), metav1.PatchOptions{}, "status")
	if err != nil || p.Status.Replicas != 9 {
		t.Errorf("status subresource: %+v %v", p.Status, err)
	}
}

func TestDryRun(t *testing.T) {
	ts := sharedServer(t)
	ctx := context.Background()
	ns := newNamespace(t, ts.client)
	if _, err := ts.client.CoreV1().Pods(ns).Create(ctx, pod("dry"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.client.CoreV1().Pods(ns).Get(ctx, "dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("dry run wrote: %v", err)
	}
}

func TestInformerSeesEventsInOrder(t *testing.T) {
	ts := sharedServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := newNamespace(t, ts.client)
	factory := informers.NewSharedInformerFactoryWithOptions(ts.client, 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().Pods().Informer()
	events := make(chan string, 100)
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) { events <- "add " + o.(*corev1.Pod).Name },
		UpdateFunc: func(_, o any) {
			p := o.(*corev1.Pod)
			e := "update " + p.Name + " " + p.Labels["v"]
			if p.DeletionTimestamp != nil {
				e += " deleting"
			}
			events <- e
		},
		DeleteFunc: func(o any) {
			if p, ok := o.(*corev1.Pod); ok {
				events <- "delete " + p.Name
			}
		},
	})
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("informer did not sync")
	}
	pods := ts.client.CoreV1().Pods(ns)
	p, err := pods.Create(ctx, pod("a"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Labels["v"] = "2"
	if _, err := pods.Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// A delete is an update (deletionTimestamp set, grace 0 for a pod no
	// node runs) before the delete, as kube-apiserver's.
	for _, want := range []string{"add a", "update a 2", "update a 2 deleting", "delete a"} {
		select {
		case got := <-events:
			if got != want {
				t.Fatalf("event %q, want %q", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no event, want %q", want)
		}
	}
}

func TestWatchBookmarksAndExpiry(t *testing.T) {
	ts := sharedServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ns := newNamespace(t, ts.client)
	list, err := ts.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := ts.client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	select {
	case ev := <-w.ResultChan():
		if ev.Type != watch.Bookmark {
			t.Errorf("first event %s, want a bookmark", ev.Type)
		}
	case <-ctx.Done():
		t.Fatal("no bookmark")
	}
}

func TestErrorsForBadRequests(t *testing.T) {
	ts := sharedServer(t)
	hc, err := rest.HTTPClientFor(ts.config)
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path, ctype, body string) (int, metav1.Status) {
		req, _ := http.NewRequest(method, ts.run.URL+path, strings.NewReader(body))
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var st metav1.Status
		_ = json.NewDecoder(resp.Body).Decode(&st)
		return resp.StatusCode, st
	}
	tests := []struct {
		name, method, path, ctype, body string
		code                            int
		msg                             string
	}{
		{"unknown resource", "GET", "/api/v1/widgets", "", "", 404, "the server could not find the requested resource"},
		{"unparseable body", "POST", "/api/v1/namespaces/default/configmaps", "application/json", "{", 400, `ConfigMap in version "v1" cannot be handled as a ConfigMap:`},
		{"wrong apiVersion", "POST", "/api/v1/namespaces/default/configmaps", "application/json", `{"apiVersion":"apps/v1","kind":"ConfigMap","metadata":{"name":"x"}}`, 400, "the API version in the data (apps/v1) does not match the expected API version (v1)"},
		{"wrong kind", "POST", "/api/v1/namespaces/default/configmaps", "application/json", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"}}`, 400, "the kind in the data (Secret) does not match the expected kind (ConfigMap)"},
		{"name mismatch", "PUT", "/api/v1/namespaces/default/configmaps/a", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}`, 400, "the name of the object (b) does not match the name on the URL (a)"},
		{"media type", "POST", "/api/v1/namespaces/default/configmaps", "text/plain", "x", 415, "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml"},
		{"too large", "POST", "/api/v1/namespaces/default/configmaps", "application/json", `{"data":{"a":"` + strings.Repeat("x", 4<<20) + `"}}`, 413, "Request entity too large: limit is 3145728"},
		{"bad selector", "GET", "/api/v1/pods?labelSelector=a+in+(b", "", "", 400, "unable to parse requirement"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, st := do(tt.method, tt.path, tt.ctype, tt.body)
			if code != tt.code || int(st.Code) != tt.code || !strings.Contains(st.Message, tt.msg) || st.Kind != "Status" {
				t.Errorf("got %d %+v, want %d containing %q", code, st, tt.code, tt.msg)
			}
		})
	}
	// Nothing of the above was written.
	if _, err := ts.client.CoreV1().ConfigMaps("default").Get(context.Background(), "x", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a rejected request wrote: %v", err)
	}
}

func TestAnonymousIsUnauthorized(t *testing.T) {
	ts := sharedServer(t)
	cfg := rest.AnonymousClientConfig(ts.config)
	c := kubernetes.NewForConfigOrDie(cfg)
	_, err := c.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{})
	if !apierrors.IsUnauthorized(err) {
		t.Errorf("anonymous list: %v", err)
	}
}
