package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// deletedBody is what a delete answered: an object's metadata, or a
// Status.
type deletedBody struct {
	Kind     string                `json:"kind"`
	Metadata metav1.ObjectMeta     `json:"metadata"`
	Status   json.RawMessage       `json:"status"`
	Details  *metav1.StatusDetails `json:"details"`
	Code     int32                 `json:"code"`
	Message  string                `json:"message"`
}

// TestDeletePropagation holds DELETE to kube-apiserver 1.37's answers
// (k8s.io/apiserver's DeleteResource and generic Store.Delete, the kinds'
// ReturnDeletedObject and DefaultGarbageCollectionPolicy): which deletes
// leave the object for the garbage collector with which finalizer, the
// status code, and whether the body is the object or a Status.
func TestDeletePropagation(t *testing.T) {
	ts := sharedServer(t)
	ctx := context.Background()
	ns := newNamespace(t, ts.client)
	const (
		orphan = metav1.FinalizerOrphanDependents
		fg     = metav1.FinalizerDeleteDependents
	)
	deploy := func(name string, finalizers ...string) string {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: finalizers}, Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}}, Spec: pod("x").Spec},
		}}
		if _, err := ts.client.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		return "/apis/apps/v1/namespaces/" + ns + "/deployments/" + name
	}
	configMap := func(name string) string {
		if _, err := ts.client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		return "/api/v1/namespaces/" + ns + "/configmaps/" + name
	}
	job := func(name string) string {
		j := fmt.Sprintf(`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":%q},"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}`, name)
		if code, _, body := rawRequest(t, ts, http.MethodPost, "/apis/batch/v1/namespaces/"+ns+"/jobs", "application/json", j); code != http.StatusCreated {
			t.Fatalf("creating job: %d %s", code, body)
		}
		return "/apis/batch/v1/namespaces/" + ns + "/jobs/" + name
	}
	event := func(name string) string {
		e := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name}, InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p", Namespace: ns}, Reason: "R", Message: "m", Type: "Normal"}
		if _, err := ts.client.CoreV1().Events(ns).Create(ctx, e, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		return "/api/v1/namespaces/" + ns + "/events/" + name
	}
	podPath := func(name string) string {
		if _, err := ts.client.CoreV1().Pods(ns).Create(ctx, pod(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		return "/api/v1/namespaces/" + ns + "/pods/" + name
	}
	for _, tt := range []struct {
		name   string
		path   func(string) string
		query  string
		body   string
		code   int
		status bool     // the body is a Status (else the object)
		stored []string // the object stays, with these finalizers; nil: removed
		msg    string   // an error's message
	}{
		{name: "deployment, no options: background", path: func(n string) string { return deploy(n) }, code: 200, status: true},
		{name: "deployment, Background", path: func(n string) string { return deploy(n) }, query: "propagationPolicy=Background", code: 200, status: true},
		{name: "deployment, Orphan", path: func(n string) string { return deploy(n) }, query: "propagationPolicy=Orphan", code: 200, stored: []string{orphan}},
		{name: "deployment, Foreground", path: func(n string) string { return deploy(n) }, query: "propagationPolicy=Foreground", code: 200, stored: []string{fg}},
		{name: "deployment, Orphan in the body", path: func(n string) string { return deploy(n) }, body: `{"propagationPolicy":"Orphan"}`, code: 200, stored: []string{orphan}},
		{name: "deployment, orphanDependents=true", path: func(n string) string { return deploy(n) }, query: "orphanDependents=true", code: 200, stored: []string{orphan}},
		{name: "deployment, orphanDependents=false, nothing else holds it", path: func(n string) string { return deploy(n) }, query: "orphanDependents=false", code: 200, status: true},
		{name: "deployment, orphanDependents=false, another finalizer: 202", path: func(n string) string { return deploy(n, "example.com/hold") }, query: "orphanDependents=false", code: 202, stored: []string{"example.com/hold"}},
		{name: "deployment, Orphan kept beside another finalizer", path: func(n string) string { return deploy(n, "example.com/hold") }, query: "propagationPolicy=Orphan", code: 200, stored: []string{"example.com/hold", orphan}},
		{name: "unknown policy", path: func(n string) string { return deploy(n) }, query: "propagationPolicy=Sideways", code: 422,
			msg: `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"`},
		{name: "both options", path: func(n string) string { return deploy(n) }, body: `{"orphanDependents":true,"propagationPolicy":"Orphan"}`, code: 422,
			msg: `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set`},
		{name: "configmap: Status", path: configMap, code: 200, status: true},
		{name: "batch/v1 job, no options: orphaned by default", path: job, code: 200, stored: []string{orphan}},
		{name: "batch/v1 job, Background", path: job, query: "propagationPolicy=Background", code: 200, status: true},
		{name: "event: never garbage collected", path: event, query: "propagationPolicy=Orphan", code: 200, status: true},
		{name: "pod: the object", path: podPath, code: 200},
		{name: "pod, Orphan", path: podPath, query: "propagationPolicy=Orphan", code: 200, stored: []string{orphan}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			name := strings.NewReplacer(" ", "", ",", "", ":", "", "=", "", "/", "").Replace(strings.ToLower(tt.name))
			if len(name) > 40 {
				name = name[:40]
			}
			path := tt.path(name)
			url := path
			if tt.query != "" {
				url += "?" + tt.query
			}
			code, _, data := rawRequest(t, ts, http.MethodDelete, url, "application/json", tt.body)
			if code != tt.code {
				t.Fatalf("code %d, want %d: %s", code, tt.code, data)
			}
			var got deletedBody
			if err := json.Unmarshal(data, &got); err != nil {
				t.Fatal(err)
			}
			if tt.msg != "" {
				if got.Message != tt.msg {
					t.Errorf("message\n%s\nwant\n%s", got.Message, tt.msg)
				}
				return
			}
			if isStatus := got.Kind == "Status"; isStatus != tt.status {
				t.Errorf("answered a %s: %s", got.Kind, data)
			}
			if tt.status && (got.Details == nil || got.Details.Name != name || got.Details.UID == "" || !strings.Contains(path, "/"+got.Details.Kind+"/") || string(got.Status) != `"Success"` || got.Code != 0) {
				t.Errorf("Status is not upstream's (details.kind the resource, no code): %s", data)
			}
			code, _, data = rawRequest(t, ts, http.MethodGet, path, "application/json", "")
			if tt.stored == nil {
				if code != http.StatusNotFound {
					t.Errorf("still stored: %d %s", code, data)
				}
				return
			}
			var after deletedBody
			if err := json.Unmarshal(data, &after); err != nil || code != http.StatusOK {
				t.Fatalf("not stored: %d %s", code, data)
			}
			if !slices.Equal(after.Metadata.Finalizers, tt.stored) || after.Metadata.DeletionTimestamp == nil || ptr.Deref(after.Metadata.DeletionGracePeriodSeconds, -1) != 0 {
				t.Errorf("stored finalizers %v, deletionTimestamp %v, grace %v; want %v, set, 0", after.Metadata.Finalizers, after.Metadata.DeletionTimestamp, after.Metadata.DeletionGracePeriodSeconds, tt.stored)
			}
			// The garbage collector's last step: the finalizers go, so
			// does the object.
			if code, _, data := rawRequestType(t, ts, http.MethodPatch, path, string(types.MergePatchType), `{"metadata":{"finalizers":null}}`); code != http.StatusOK {
				t.Fatalf("removing finalizers: %d %s", code, data)
			}
			if code, _, data := rawRequest(t, ts, http.MethodGet, path, "application/json", ""); code != http.StatusNotFound {
				t.Errorf("finalizers removed, still stored: %d %s", code, data)
			}
		})
	}
}

// TestDeleteNodeAnswersStatus: kube-apiserver answers a Node delete with a
// Status (its store does not return deleted objects), a Namespace's final
// delete with the object.
func TestDeleteNodeAnswersStatus(t *testing.T) {
	ts := sharedServer(t)
	ctx := context.Background()
	if _, err := ts.client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "delete-status-node"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	code, _, data := rawRequest(t, ts, http.MethodDelete, "/api/v1/nodes/delete-status-node", "application/json", "")
	var got deletedBody
	if err := json.Unmarshal(data, &got); err != nil || code != http.StatusOK || got.Kind != "Status" || got.Details == nil || got.Details.Kind != "nodes" {
		t.Errorf("node delete answered %d %s", code, data)
	}
	// Protobuf clients get the Status as protobuf.
	code, ctype, _ := rawRequest(t, ts, http.MethodDelete, "/api/v1/nodes/delete-status-node", "application/vnd.kubernetes.protobuf", "")
	if code != http.StatusNotFound || ctype != "application/vnd.kubernetes.protobuf" {
		t.Errorf("second delete: %d %s", code, ctype)
	}
}

// TestNamespaceLifecycle is kube-apiserver's namespace delete: Terminating
// with the kubernetes finalizer, creates refused with NamespaceLifecycle's
// 403, and gone once /finalize empties spec.finalizers. Nothing empties the
// namespace here: the test server runs no namespace controller.
func TestNamespaceLifecycle(t *testing.T) {
	ts := sharedServer(t)
	ctx := context.Background()
	ns := newNamespace(t, ts.client)
	created, err := ts.client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(created.Spec.Finalizers, []corev1.FinalizerName{corev1.FinalizerKubernetes}) || created.Status.Phase != corev1.NamespaceActive {
		t.Fatalf("created with %v %q", created.Spec.Finalizers, created.Status.Phase)
	}
	if _, err := ts.client.CoreV1().Pods(ns).Create(ctx, pod("p"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	code, _, data := rawRequest(t, ts, http.MethodDelete, "/api/v1/namespaces/"+ns, "application/json", "")
	var deleted corev1.Namespace
	if err := json.Unmarshal(data, &deleted); err != nil || code != http.StatusOK || deleted.Kind != "Namespace" {
		t.Fatalf("delete answered %d %s", code, data)
	}
	if deleted.Status.Phase != corev1.NamespaceTerminating || deleted.DeletionTimestamp == nil || deleted.DeletionGracePeriodSeconds != nil ||
		!slices.Equal(deleted.Spec.Finalizers, []corev1.FinalizerName{corev1.FinalizerKubernetes}) {
		t.Errorf("deleted namespace %q, deletionTimestamp %v, grace %v, finalizers %v", deleted.Status.Phase, deleted.DeletionTimestamp, deleted.DeletionGracePeriodSeconds, deleted.Spec.Finalizers)
	}
	if _, err := ts.client.CoreV1().Pods(ns).Get(ctx, "p", metav1.GetOptions{}); err != nil {
		t.Errorf("the API server emptied the namespace itself: %v", err)
	}

	p := pod("")
	p.GenerateName = "late-"
	_, err = ts.client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
	var se *apierrors.StatusError
	want := fmt.Sprintf(`pods "late-" is forbidden: unable to create new content in namespace %s because it is being terminated`, ns)
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("create in a terminating namespace: %v\nwant %s", err, want)
	}
	if !errors.As(err, &se) || se.ErrStatus.Details == nil || len(se.ErrStatus.Details.Causes) != 1 ||
		se.ErrStatus.Details.Causes[0].Type != corev1.NamespaceTerminatingCause || se.ErrStatus.Details.Causes[0].Field != "metadata.namespace" ||
		se.ErrStatus.Details.Causes[0].Message != "namespace "+ns+" is being terminated" {
		t.Errorf("403 details: %+v", se.ErrStatus.Details)
	}

	// A second delete changes nothing while spec.finalizers holds it.
	again, err := ts.client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if now, err := ts.client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil || now.ResourceVersion != again.ResourceVersion {
		t.Errorf("second delete wrote: %v", err)
	}

	// An update of the namespace itself cannot drop spec.finalizers.
	again.Spec.Finalizers = nil
	if upd, err := ts.client.CoreV1().Namespaces().Update(ctx, again, metav1.UpdateOptions{}); err != nil || len(upd.Spec.Finalizers) != 1 {
		t.Errorf("update changed spec.finalizers: %v", err)
	}
	if code, _, data := rawRequest(t, ts, http.MethodGet, "/api/v1/namespaces/"+ns+"/finalize", "application/json", ""); code != http.StatusMethodNotAllowed {
		t.Errorf("GET finalize: %d %s", code, data)
	}
	bad := again.DeepCopy()
	bad.Spec.Finalizers = []corev1.FinalizerName{"not a name"}
	if _, err := ts.client.CoreV1().Namespaces().Finalize(ctx, bad, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("invalid finalize: %v", err)
	}
	// The namespace controller's last step.
	cur, err := ts.client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec.Finalizers = nil
	fin, err := ts.client.CoreV1().Namespaces().Finalize(ctx, cur, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if fin.Status.Phase != corev1.NamespaceTerminating {
		t.Errorf("finalize answered phase %q", fin.Status.Phase)
	}
	if _, err := ts.client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("finalized namespace still there: %v", err)
	}
	if err := ts.client.CoreV1().Namespaces().Delete(ctx, "default", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("deleting default: %v", err)
	}
}

// TestNamespaceMetadataFinalizersOutlastFinalize: an orphan delete of a
// namespace leaves it for the garbage collector after /finalize.
func TestNamespaceMetadataFinalizersOutlastFinalize(t *testing.T) {
	ts := sharedServer(t)
	ctx := context.Background()
	ns := newNamespace(t, ts.client)
	if err := ts.client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan)}); err != nil {
		t.Fatal(err)
	}
	cur, err := ts.client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil || !slices.Equal(cur.Finalizers, []string{metav1.FinalizerOrphanDependents}) {
		t.Fatalf("orphan delete: %v %v", err, cur)
	}
	cur.Spec.Finalizers = nil
	if _, err := ts.client.CoreV1().Namespaces().Finalize(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cur, err = ts.client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the orphan finalizer did not hold the namespace: %v", err)
	}
	cur.Finalizers = nil
	if _, err := ts.client.CoreV1().Namespaces().Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace without finalizers still there: %v", err)
	}
}

// rawRequestType sends a request whose body has the given Content-Type.
func rawRequestType(t *testing.T, ts *testServer, method, path, contentType, body string) (int, string, []byte) {
	t.Helper()
	hc, err := rest.HTTPClientFor(ts.config)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, ts.config.Host+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
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

// TestOrphanDeleteIsAModification: watchers see an orphan delete as
// MODIFIED (deletionTimestamp, the orphan finalizer) and the object go,
// DELETED, when the garbage collector's update removes the finalizer.
func TestOrphanDeleteIsAModification(t *testing.T) {
	ts := sharedServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns := newNamespace(t, ts.client)
	cms := ts.client.CoreV1().ConfigMaps(ns)
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: cm.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := cms.Delete(ctx, "owner", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan)}); err != nil {
		t.Fatal(err)
	}
	next := func() (watch.EventType, *corev1.ConfigMap) {
		t.Helper()
		select {
		case ev := <-w.ResultChan():
			got, _ := ev.Object.(*corev1.ConfigMap)
			return ev.Type, got
		case <-ctx.Done():
			t.Fatal("no watch event")
		}
		return "", nil
	}
	typ, got := next()
	if typ != watch.Modified || got.DeletionTimestamp == nil || !slices.Equal(got.Finalizers, []string{metav1.FinalizerOrphanDependents}) {
		t.Fatalf("first event %s %+v; want MODIFIED with deletionTimestamp and the orphan finalizer", typ, got)
	}
	if _, err := cms.Patch(ctx, "owner", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if typ, _ := next(); typ != watch.Deleted {
		t.Errorf("after the finalizer went: %s, want DELETED", typ)
	}
}
