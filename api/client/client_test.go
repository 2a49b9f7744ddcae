package client_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/dnsplane/dnsplane/api"
	dpappsv1 "github.com/dnsplane/dnsplane/api/apps/v1"
	dpbatchv1 "github.com/dnsplane/dnsplane/api/batch/v1"
	"github.com/dnsplane/dnsplane/api/client/clientset/versioned"
	"github.com/dnsplane/dnsplane/api/client/informers/externalversions"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	dpoperatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
	"github.com/dnsplane/dnsplane/internal/features"
)

// These tests run the generated clients against the real API server
// (controlplanetest: in-process, embedded etcd). They sit beside the
// generated code in an external test package: internal/apiserver's own
// tests cannot import controlplanetest, which imports it.

const ns = metav1.NamespaceDefault

// customSpec is a pod spec with dnsPolicy Custom (docs/pod-dns.md): the
// dnsParams are what a client with k8s.io/api's types cannot see.
const customSpec = `{"containers":[{"name":"app","image":"example"}],"dnsPolicy":"Custom",
	"dnsParams":{"custom":{"search":["$(NAMESPACE).svc.$(CLUSTER)","$(HOST)"],"options":["ndots:2"]}}}`

// wantParams is customSpec's dnsParams.
var wantParams = &dpcorev1.PodDNSParams{Custom: &dpcorev1.PodDNSParamsCustom{
	Search:  []string{"$(NAMESPACE).svc.$(CLUSTER)", "$(HOST)"},
	Options: []string{"ndots:2"},
}}

// start runs an API server with dnsPolicy Custom on (PodDNSCustomPolicy is
// a beta gate, on by default; set here because these tests depend on it)
// and returns it with a generated clientset for its admin.
func start(t *testing.T) (*controlplanetest.TestServer, versioned.Interface) {
	t.Helper()
	gates, err := features.Parse(string(features.PodDNSCustomPolicy) + "=true")
	if err != nil {
		t.Fatal(err)
	}
	ts := controlplanetest.StartTestServer(t, controlplane.Config{Gates: gates})
	cs, err := versioned.NewForConfig(ts.ClientConfig)
	if err != nil {
		t.Fatalf("generated clientset: %v", err)
	}
	return ts, cs
}

// decode returns doc decoded into a new T, as a manifest would be.
func decode[T any](t *testing.T, doc string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("decoding %s: %v", doc, err)
	}
	return v
}

func createPod(t *testing.T, cs versioned.Interface, name string) *dpcorev1.Pod {
	t.Helper()
	p := decode[*dpcorev1.Pod](t, `{"metadata":{"name":"`+name+`"},"spec":`+customSpec+`}`)
	out, err := cs.CoreV1().Pods(ns).Create(t.Context(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s: %v", name, err)
	}
	return out
}

// checkParams fails the test unless every pod spec obj carries has
// customSpec's dnsParams.
func checkParams(t *testing.T, how string, obj any) {
	t.Helper()
	specs := api.PodSpecs(obj)
	if len(specs) == 0 {
		t.Fatalf("%s: %T carries no pod spec", how, obj)
	}
	for _, s := range specs {
		if !reflect.DeepEqual(s.Spec.DNSParams, wantParams) {
			got, _ := json.Marshal(s.Spec.DNSParams)
			t.Errorf("%s: %s.dnsParams = %s, want customSpec's", how, s.Path, got)
		}
	}
}

type podEvent struct {
	kind string // add, update
	pod  *dpcorev1.Pod
}

// next returns the first event of kind for pod name that satisfies ok,
// skipping the others; it fails the test after 30 s.
func next(t *testing.T, events <-chan podEvent, kind, name string, ok func(*dpcorev1.Pod) bool) *dpcorev1.Pod {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case e := <-events:
			if e.kind == kind && e.pod.Name == name && ok(e.pod) {
				return e.pod
			}
		case <-timeout:
			t.Fatalf("no %s event for pod %s within 30s", kind, name)
		}
	}
}

func anyPod(*dpcorev1.Pod) bool { return true }

// TestInformerKeepsDNSParams: a shared informer from the generated
// informers, over the generated clientset, sees spec.dnsParams in the
// initial list, in watch events for a create, an update and a status
// update, and in its lister's cache.
func TestInformerKeepsDNSParams(t *testing.T) {
	_, cs := start(t)
	ctx := t.Context()

	// Created before the informer starts: it arrives through the list.
	createPod(t, cs, "listed")

	factory := externalversions.NewSharedInformerFactoryWithOptions(cs, 0, externalversions.WithNamespace(ns))
	pods := factory.Core().V1().Pods()
	events := make(chan podEvent, 256)
	if _, err := pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { events <- podEvent{"add", obj.(*dpcorev1.Pod)} },
		UpdateFunc: func(_, obj any) { events <- podEvent{"update", obj.(*dpcorev1.Pod)} },
	}); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	t.Cleanup(factory.Shutdown)
	syncCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), pods.Informer().HasSynced) {
		t.Fatal("the pod informer did not sync within 30s")
	}

	checkParams(t, "list", next(t, events, "add", "listed", anyPod))
	cached, err := pods.Lister().Pods(ns).Get("listed")
	if err != nil {
		t.Fatalf("lister: %v", err)
	}
	checkParams(t, "lister", cached)

	// Created after the informer synced: it arrives through the watch.
	createPod(t, cs, "watched")
	checkParams(t, "watch add", next(t, events, "add", "watched", anyPod))

	p, err := cs.CoreV1().Pods(ns).Get(ctx, "watched", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Labels = map[string]string{"updated": "yes"}
	p, err = cs.CoreV1().Pods(ns).Update(ctx, p, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	checkParams(t, "watch update", next(t, events, "update", "watched", func(p *dpcorev1.Pod) bool {
		return p.Labels["updated"] == "yes"
	}))

	p.Status.Phase = corev1.PodRunning
	if _, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update status: %v", err)
	}
	checkParams(t, "watch update-status", next(t, events, "update", "watched", func(p *dpcorev1.Pod) bool {
		return p.Status.Phase == corev1.PodRunning
	}))
}

// TestUpdateKeepsDNSParams: a pod read, changed and written back keeps its
// dnsParams with either client. The generated client sends them; client-go's
// k8s.io/api Pod has no field for them, and the API server keeps the stored
// ones because the pod's pod.dnsplane.io/dns-params annotation came back
// unchanged (docs/pod-dns.md, "dnsParams and controllers"; before that, the
// update was refused: dnsPolicy Custom without dnsParams).
func TestUpdateKeepsDNSParams(t *testing.T) {
	ts, cs := start(t)
	cases := []struct {
		name, pod string
		// update reads the pod, adds a label, writes it back and returns
		// the server's response.
		update func(ctx context.Context, name string) (any, error)
		// typed: the response is one of dnsplane's types, which carry
		// dnsParams (client-go's answer has no field for them).
		typed bool
	}{
		{name: "generated clientset", pod: "generated", typed: true, update: func(ctx context.Context, name string) (any, error) {
			p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			p.Labels = map[string]string{"updated": "yes"}
			return cs.CoreV1().Pods(ns).Update(ctx, p, metav1.UpdateOptions{})
		}},
		{name: "client-go", pod: "client-go", update: func(ctx context.Context, name string) (any, error) {
			p, err := ts.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			p.Labels = map[string]string{"updated": "yes"}
			return ts.Client.CoreV1().Pods(ns).Update(ctx, p, metav1.UpdateOptions{})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			createPod(t, cs, c.pod)
			out, err := c.update(t.Context(), c.pod)
			if err != nil {
				t.Fatalf("update: %v", err)
			}
			if c.typed {
				checkParams(t, "update response", out)
			}
			stored, err := cs.CoreV1().Pods(ns).Get(t.Context(), c.pod, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			checkParams(t, "stored after update", stored)
			if stored.Labels["updated"] != "yes" {
				t.Errorf("the update was not stored: labels %v", stored.Labels)
			}
		})
	}
}

// TestUpdateStatusLeavesSpec: /status stores the new status on the stored
// object and ignores the spec sent with it, dnsParams included.
func TestUpdateStatusLeavesSpec(t *testing.T) {
	_, cs := start(t)
	ctx := t.Context()
	p := createPod(t, cs, "status")
	p.Status.Phase = corev1.PodRunning
	p.Spec.DNSParams.Custom.Options = []string{"ndots:9"}
	p.Spec.DNSParams.Custom.Search = nil
	p.Spec.Containers[0].Image = "other"
	out, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update status: %v", err)
	}
	stored, err := cs.CoreV1().Pods(ns).Get(ctx, "status", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for how, got := range map[string]*dpcorev1.Pod{"response": out, "stored": stored} {
		if got.Status.Phase != corev1.PodRunning {
			t.Errorf("%s: phase %q, want Running", how, got.Status.Phase)
		}
		checkParams(t, how, got)
		if img := got.Spec.Containers[0].Image; img != "example" {
			t.Errorf("%s: image %q: /status changed the spec", how, img)
		}
	}
}

// typedClient is what every generated typed client has.
type typedClient[T, L runtime.Object] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
	Get(context.Context, string, metav1.GetOptions) (T, error)
	List(context.Context, metav1.ListOptions) (L, error)
}

// objectClient is a typedClient of any kind, for one table.
type objectClient struct {
	create    func(context.Context, runtime.Object) (runtime.Object, error)
	get, list func(context.Context) (runtime.Object, error)
}

// untyped adapts c; get reads the object named "x".
func untyped[T, L runtime.Object](c typedClient[T, L]) objectClient { return untypedNamed(c, "x") }

// untypedNamed adapts c; get reads the object named name.
func untypedNamed[T, L runtime.Object](c typedClient[T, L], name string) objectClient {
	return objectClient{
		create: func(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
			return c.Create(ctx, obj.(T), metav1.CreateOptions{})
		},
		get:  func(ctx context.Context) (runtime.Object, error) { return c.Get(ctx, name, metav1.GetOptions{}) },
		list: func(ctx context.Context) (runtime.Object, error) { return c.List(ctx, metav1.ListOptions{}) },
	}
}

// TestClientEveryKind: each group's generated client (core under /api, the
// others under /apis, DNS cluster-scoped) reaches its resource, and every
// pod template carrier keeps dnsParams through create, get and list.
func TestClientEveryKind(t *testing.T) {
	_, cs := start(t)
	name := `"metadata":{"name":"x"}`
	tmpl := `{"metadata":{"labels":{"app":"x"}},"spec":` + customSpec + `}`
	// A Job's pods may not restart in place (upstream's Job validation).
	jobTmpl := `{"metadata":{"labels":{"app":"x"}},"spec":` + strings.Replace(customSpec, `"dnsPolicy"`, `"restartPolicy":"Never","dnsPolicy"`, 1) + `}`
	carrier := `{` + name + `,"spec":{"selector":{"matchLabels":{"app":"x"}},"template":` + tmpl + `}}`
	cases := []struct {
		kind   string
		client objectClient
		obj    runtime.Object
	}{
		{"PodTemplate", untyped(cs.CoreV1().PodTemplates(ns)),
			decode[*dpcorev1.PodTemplate](t, `{`+name+`,"template":`+tmpl+`}`)},
		{"ReplicationController", untyped(cs.CoreV1().ReplicationControllers(ns)),
			decode[*dpcorev1.ReplicationController](t, `{`+name+`,"spec":{"selector":{"app":"x"},"template":`+tmpl+`}}`)},
		{"Deployment", untyped(cs.AppsV1().Deployments(ns)), decode[*dpappsv1.Deployment](t, carrier)},
		{"ReplicaSet", untyped(cs.AppsV1().ReplicaSets(ns)), decode[*dpappsv1.ReplicaSet](t, carrier)},
		{"StatefulSet", untyped(cs.AppsV1().StatefulSets(ns)), decode[*dpappsv1.StatefulSet](t, carrier)},
		{"DaemonSet", untyped(cs.AppsV1().DaemonSets(ns)), decode[*dpappsv1.DaemonSet](t, carrier)},
		{"Job", untyped(cs.BatchV1().Jobs(ns)),
			decode[*dpbatchv1.Job](t, `{`+name+`,"spec":{"template":`+jobTmpl+`}}`)},
		{"CronJob", untyped(cs.BatchV1().CronJobs(ns)),
			decode[*dpbatchv1.CronJob](t, `{`+name+`,"spec":{"schedule":"* * * * *","jobTemplate":{"spec":{"template":`+jobTmpl+`}}}}`)},
		// DNS is a singleton: the only name it accepts is "default".
		{"DNS", untypedNamed(cs.OperatorV1().DNSes(), dpoperatorv1.DefaultName),
			decode[*dpoperatorv1.DNS](t, `{"metadata":{"name":"default"},"spec":{"pluginConfig":{"forwardPlugins":[{"domain":"example.com","nameServers":["10.0.0.1"]}]}}}`)},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			ctx := t.Context()
			created, err := c.client.create(ctx, c.obj)
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			got, err := c.client.get(ctx)
			if err != nil {
				t.Fatalf("get: %v", err)
			}
			list, err := c.client.list(ctx)
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			items, err := meta.ExtractList(list)
			if err != nil {
				t.Fatal(err)
			}
			if len(items) != 1 {
				t.Fatalf("list has %d items, want 1", len(items))
			}
			if len(api.PodSpecs(c.obj)) == 0 {
				return // DNS: no pod spec
			}
			checkParams(t, "create", created)
			checkParams(t, "get", got)
			checkParams(t, "list", items[0])
		})
	}
}
