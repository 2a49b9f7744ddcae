package apiserver

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
)

// TestMetadataClient drives client-go's metadata client, as metadata
// informers and the garbage collector use it: list, get and watch return
// PartialObjectMetadata.
func TestMetadataClient(t *testing.T) {
	ts := sharedServer(t)
	ctx := context.Background()
	ns := newNamespace(t, ts.client)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"k": "v"}}, Data: map[string]string{"big": "data"}}
	if _, err := ts.client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mc, err := metadata.NewForConfig(ts.config)
	if err != nil {
		t.Fatal(err)
	}
	cms := mc.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "a" || list.Items[0].Labels["k"] != "v" || list.ResourceVersion == "" {
		t.Errorf("list %+v", list)
	}
	got, err := cms.Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "a" || got.UID == "" {
		t.Errorf("get %+v", got)
	}
	// On the wire (the client drops TypeMeta): the kinds, and no data.
	raw := ts.client.CoreV1().RESTClient()
	for as, want := range map[string]string{
		"PartialObjectMetadataList": `{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1"`,
		"PartialObjectMetadata":     `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1"`,
	} {
		req := raw.Get().Namespace(ns).Resource("configmaps").SetHeader("Accept", "application/json;as="+as+";g=meta.k8s.io;v=v1")
		if as == "PartialObjectMetadata" {
			req = req.Name("a")
		}
		body, err := req.Do(ctx).Raw()
		if err != nil || !strings.HasPrefix(string(body), want) || strings.Contains(string(body), `"big"`) {
			t.Errorf("%s: %s %v", as, body, err)
		}
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := ts.client.CoreV1().ConfigMaps(ns).Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-w.ResultChan():
		p, ok := e.Object.(*metav1.PartialObjectMetadata)
		if e.Type != watch.Deleted || !ok || p.Name != "a" {
			t.Errorf("event %s %#v", e.Type, e.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event")
	}
}

// TestMetadataNotAcceptable: a list asked for as one object, or an object
// as a list, is kube-apiserver's 406.
func TestMetadataNotAcceptable(t *testing.T) {
	ts := sharedServer(t)
	ctx := context.Background()
	ns := newNamespace(t, ts.client)
	if _, err := ts.client.CoreV1().Pods(ns).Create(ctx, pod("p"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	raw := ts.client.CoreV1().RESTClient()
	for _, tc := range []struct {
		name, as, want string
		get            bool
	}{
		{"list as object", "PartialObjectMetadata", "you requested PartialObjectMetadata, but the requested object is a list (*core.PodList)", false},
		{"object as list", "PartialObjectMetadataList", "you requested PartialObjectMetadataList, but the requested object is not a list (*core.Pod)", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := raw.Get().Namespace(ns).Resource("pods").SetHeader("Accept", "application/json;as="+tc.as+";g=meta.k8s.io;v=v1")
			if tc.get {
				req = req.Name("p")
			}
			var code int
			body, _ := req.Do(ctx).StatusCode(&code).Raw()
			if code != 406 || !strings.Contains(string(body), tc.want) {
				t.Errorf("got %d %s", code, body)
			}
		})
	}
}
