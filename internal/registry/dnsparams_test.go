package registry

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/dnsplane/dnsplane/api"
	dpappsv1 "github.com/dnsplane/dnsplane/api/apps/v1"
	dpbatchv1 "github.com/dnsplane/dnsplane/api/batch/v1"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/dnsparams"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/validation"
)

// template is a Custom pod template; params is its dnsParams' YAML (""
// for none), annotation its dnsParams annotation (none when "").
func template(params, annotation string) string {
	t := "    metadata:\n      labels: {app: web}\n"
	if annotation != "" {
		t += "      annotations:\n        pod.dnsplane.io/dns-params: '" + annotation + "'\n"
	}
	t += "    spec:\n      containers: [{name: c, image: nginx}]\n      dnsPolicy: Custom\n"
	if params != "" {
		t += "      dnsParams: " + params + "\n"
	}
	return t
}

const (
	paramsA = `{custom: {search: [a.example.com]}}`
	annoA   = `{"custom":{"search":["a.example.com"]}}`
	paramsB = `{custom: {search: [_sip._tcp.example.com, $(HOST)]}}`
	annoB   = `{"custom":{"search":["_sip._tcp.example.com","$(HOST)"]}}`
)

func deploymentYAML(params, annotation string) string {
	return "metadata: {name: web, namespace: ns}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n" + template(params, annotation)
}

func daemonSetYAML(params, annotation string) string {
	return "metadata: {name: web, namespace: ns}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n" + template(params, annotation)
}

func replicaSetYAML(params, annotation string) string {
	return "metadata: {name: web-1, namespace: ns}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: web}}\n  template:\n" + template(params, annotation)
}

func cronJobYAML(params, annotation string) string {
	// The job template's pod template, four levels deeper.
	t := strings.ReplaceAll(template(params, annotation), "\n    ", "\n          ")
	t = strings.Replace(t, "    ", "          ", 1)
	t = strings.Replace(t, "containers: [{name: c, image: nginx}]", "containers: [{name: c, image: nginx}]\n            restartPolicy: Never", 1)
	return "metadata: {name: web, namespace: ns}\nspec:\n  schedule: '* * * * *'\n  jobTemplate:\n    spec:\n      template:\n" + t
}

func jobYAML(params string) string {
	return "metadata: {name: j, namespace: ns}\nspec:\n  template:\n" + template(params, "") + "      restartPolicy: Never\n"
}

func podYAML(params, annotation string) string {
	p := "metadata:\n  name: web-1\n  namespace: ns\n  labels: {app: web}\n"
	if annotation != "" {
		p += "  annotations:\n    pod.dnsplane.io/dns-params: '" + annotation + "'\n"
	}
	p += "spec:\n  containers: [{name: c, image: nginx}]\n  dnsPolicy: Custom\n"
	if params != "" {
		p += "  dnsParams: " + params + "\n"
	}
	return p
}

func decode[T any](t *testing.T, manifest string) *T {
	t.Helper()
	obj := new(T)
	if err := yaml.UnmarshalStrict([]byte(manifest), obj); err != nil {
		t.Fatalf("%v\n%s", err, manifest)
	}
	return obj
}

// throughUpstream is obj as a client compiled against k8s.io/api (every
// upstream controller, kubectl's typed clients) sends it back: decoded into
// U, which has no spec.dnsParams, and encoded again.
func throughUpstream[T, U any](t *testing.T, obj *T) *T {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := new(U)
	if err := json.Unmarshal(b, u); err != nil {
		t.Fatal(err)
	}
	if b, err = json.Marshal(u); err != nil {
		t.Fatal(err)
	}
	out := new(T)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func create(t *testing.T, s rest.Strategy, obj any) field.ErrorList {
	t.Helper()
	s.PrepareForCreate(context.Background(), obj)
	errs := rest.ValidateCreate(context.Background(), s, true, obj)
	// As stored: an update must name the version it replaces.
	obj.(metav1.Object).SetResourceVersion("1")
	return errs
}

func update(t *testing.T, s rest.Strategy, obj, old any) field.ErrorList {
	t.Helper()
	obj.(metav1.Object).SetResourceVersion(old.(metav1.Object).GetResourceVersion())
	s.PrepareForUpdate(context.Background(), obj, old)
	return rest.ValidateUpdate(context.Background(), s, true, obj, old)
}

func dnsParamsOf(obj any) string {
	p := api.PodSpecs(obj)[0].Spec.DNSParams
	if p == nil {
		return "<nil>"
	}
	return dnsparams.Encode(p)
}

func strategy(opts validation.Options, group, kind string) rest.Strategy {
	return Strategies(Config{DNS: opts})[schema.GroupKind{Group: group, Kind: kind}]
}

var allGates = validation.Options{RelaxedDNSSearchValidation: true, PodDNSCustomPolicy: true, PodDNSAutopath: true}

// TestDNSParamsSurviveUpstreamClients runs the rules of docs/pod-dns.md,
// "dnsParams and controllers", through the strategies, with the objects a
// client compiled against k8s.io/api sends.
func TestDNSParamsSurviveUpstreamClients(t *testing.T) {
	t.Parallel()

	t.Run("a ReplicaSet created from a Custom template with only the annotation", func(t *testing.T) {
		t.Parallel()
		rs := decode[dpappsv1.ReplicaSet](t, replicaSetYAML("", annoA))
		if errs := create(t, strategy(allGates, "apps", "ReplicaSet"), rs); len(errs) != 0 {
			t.Fatal(errs)
		}
		if got := dnsParamsOf(rs); got != annoA {
			t.Errorf("dnsParams %s, want %s", got, annoA)
		}
	})

	t.Run("a pod created from a template with only the annotation", func(t *testing.T) {
		t.Parallel()
		p := decode[dpcorev1.Pod](t, podYAML("", annoB))
		if errs := create(t, strategy(allGates, "", "Pod"), p); len(errs) != 0 {
			t.Fatal(errs)
		}
		if got := dnsParamsOf(p); got != annoB {
			t.Errorf("dnsParams %s, want %s", got, annoB)
		}
	})

	t.Run("a Deployment PUT without the field keeps it", func(t *testing.T) {
		t.Parallel()
		s := strategy(allGates, "apps", "Deployment")
		old := decode[dpappsv1.Deployment](t, deploymentYAML(paramsA, ""))
		if errs := create(t, s, old); len(errs) != 0 {
			t.Fatal(errs)
		}
		d := throughUpstream[dpappsv1.Deployment, appsv1.Deployment](t, old)
		d.Spec.Replicas = new(int32(3))
		if errs := update(t, s, d, old); len(errs) != 0 {
			t.Fatal(errs)
		}
		if got := dnsParamsOf(d); got != annoA {
			t.Errorf("dnsParams %s, want %s", got, annoA)
		}
		if !apiequality.Semantic.DeepEqual(d.Spec.Template, old.Spec.Template) {
			t.Errorf("template changed:\n%+v\nwas\n%+v", d.Spec.Template, old.Spec.Template)
		}
	})

	t.Run("a controller's PUT of an unchanged Deployment is no new generation", func(t *testing.T) {
		t.Parallel()
		s := strategy(allGates, "apps", "Deployment")
		old := decode[dpappsv1.Deployment](t, deploymentYAML(paramsA, ""))
		if errs := create(t, s, old); len(errs) != 0 {
			t.Fatal(errs)
		}
		d := throughUpstream[dpappsv1.Deployment, appsv1.Deployment](t, old)
		if errs := update(t, s, d, old); len(errs) != 0 {
			t.Fatal(errs)
		}
		// A new generation would have the deployment controller sync,
		// and write, again and again.
		if s.(rest.Generational).GenerationChanged(d, old) {
			t.Errorf("new generation for a PUT that changes nothing:\n%+v\nwas\n%+v", d.Spec, old.Spec)
		}
	})

	t.Run("a dnsParams-only change changes the template upstream sees", func(t *testing.T) {
		t.Parallel()
		s := strategy(allGates, "apps", "Deployment")
		old := decode[dpappsv1.Deployment](t, deploymentYAML(paramsA, ""))
		if errs := create(t, s, old); len(errs) != 0 {
			t.Fatal(errs)
		}
		// A user who knows the field edits it, sending back the rest as read.
		d := old.DeepCopy()
		d.Spec.Template.Spec.DNSParams = decode[dpappsv1.Deployment](t, deploymentYAML(paramsB, "")).Spec.Template.Spec.DNSParams
		if errs := update(t, s, d, old); len(errs) != 0 {
			t.Fatal(errs)
		}
		before := throughUpstream[dpappsv1.Deployment, appsv1.Deployment](t, old)
		after := throughUpstream[dpappsv1.Deployment, appsv1.Deployment](t, d)
		if before.Spec.Template.Annotations[dnsparams.Annotation] == after.Spec.Template.Annotations[dnsparams.Annotation] {
			t.Errorf("the k8s.io/api template is the same before and after: %v", after.Spec.Template.Annotations)
		}
	})

	t.Run("a Job's dnsParams are as immutable as its template", func(t *testing.T) {
		t.Parallel()
		s := strategy(allGates, "batch", "Job")
		old := decode[dpbatchv1.Job](t, jobYAML(paramsA))
		old.UID = "u1"
		if errs := create(t, s, old); len(errs) != 0 {
			t.Fatal(errs)
		}
		j := old.DeepCopy()
		j.Spec.Template.Spec.DNSParams.Custom.Search = []string{"b.example.com"}
		errs := update(t, s, j, old)
		if len(errs) != 1 || errs[0].Field != "spec.template" || errs[0].Detail != "field is immutable" {
			t.Errorf("got %v, want upstream's spec.template: field is immutable", errs)
		}
		// Sent back by a client that does not know the field: unchanged.
		j = throughUpstream[dpbatchv1.Job, batchv1.Job](t, old)
		if errs := update(t, s, j, old); len(errs) != 0 {
			t.Fatal(errs)
		}
	})

	t.Run("a pod update without the field keeps it", func(t *testing.T) {
		t.Parallel()
		s := strategy(allGates, "", "Pod")
		old := decode[dpcorev1.Pod](t, podYAML(paramsA, ""))
		if errs := create(t, s, old); len(errs) != 0 {
			t.Fatal(errs)
		}
		p := throughUpstream[dpcorev1.Pod, corev1.Pod](t, old)
		p.Labels["new"] = "label"
		if errs := update(t, s, p, old); len(errs) != 0 {
			t.Fatal(errs)
		}
		if got := dnsParamsOf(p); got != annoA {
			t.Errorf("dnsParams %s, want %s", got, annoA)
		}
	})

	t.Run("a DaemonSet PUT without the field is no new template generation", func(t *testing.T) {
		t.Parallel()
		s := strategy(allGates, "apps", "DaemonSet")
		old := decode[dpappsv1.DaemonSet](t, daemonSetYAML(paramsA, ""))
		if errs := create(t, s, old); len(errs) != 0 {
			t.Fatal(errs)
		}
		ds := throughUpstream[dpappsv1.DaemonSet, appsv1.DaemonSet](t, old)
		if errs := update(t, s, ds, old); len(errs) != 0 {
			t.Fatal(errs)
		}
		const g = "deprecated.daemonset.template.generation"
		if ds.Annotations[g] != old.Annotations[g] {
			t.Errorf("template generation %s, want the stored %s", ds.Annotations[g], old.Annotations[g])
		}
	})

	t.Run("ratchet: relaxed search kept through a PUT with the gate off", func(t *testing.T) {
		t.Parallel()
		old := decode[dpappsv1.Deployment](t, deploymentYAML(paramsB, ""))
		if errs := create(t, strategy(allGates, "apps", "Deployment"), old); len(errs) != 0 {
			t.Fatal(errs)
		}
		off := allGates
		off.RelaxedDNSSearchValidation = false
		d := throughUpstream[dpappsv1.Deployment, appsv1.Deployment](t, old)
		if errs := update(t, strategy(off, "apps", "Deployment"), d, old); len(errs) != 0 {
			t.Fatal(errs)
		}
		// A new ReplicaSet with the same (relaxed) params is a create: strict.
		rs := decode[dpappsv1.ReplicaSet](t, replicaSetYAML("", annoB))
		errs := create(t, strategy(off, "apps", "ReplicaSet"), rs)
		if len(errs) != 1 || errs[0].Field != "spec.template.spec.dnsParams.custom.search[0]" {
			t.Errorf("strict create from the annotation: %v", errs)
		}
	})
}

// TestDNSParamsAnnotationErrors: an annotation the API server cannot turn
// into the field is refused at its path, on every kind of carrier.
func TestDNSParamsAnnotationErrors(t *testing.T) {
	t.Parallel()
	const bad = `{"custom":{"searches":["a.com"]}}`
	const msg = `must be a JSON object of spec.dnsParams: unknown field "custom.searches"`
	for _, tt := range []struct {
		name string
		obj  func() any
		kind schema.GroupKind
		path string
	}{
		{"Pod", func() any { return decode[dpcorev1.Pod](t, podYAML("", bad)) },
			schema.GroupKind{Kind: "Pod"}, "metadata.annotations[pod.dnsplane.io/dns-params]"},
		{"Deployment", func() any { return decode[dpappsv1.Deployment](t, deploymentYAML("", bad)) },
			schema.GroupKind{Group: "apps", Kind: "Deployment"}, "spec.template.metadata.annotations[pod.dnsplane.io/dns-params]"},
		{"CronJob", func() any { return decode[dpbatchv1.CronJob](t, cronJobYAML("", bad)) },
			schema.GroupKind{Group: "batch", Kind: "CronJob"}, "spec.jobTemplate.spec.template.metadata.annotations[pod.dnsplane.io/dns-params]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			errs := create(t, Strategies(Config{DNS: allGates})[tt.kind], tt.obj())
			var found bool
			for _, e := range errs {
				if e.Field == tt.path {
					found = true
					if e.Type != field.ErrorTypeInvalid || e.Detail != msg || e.BadValue != bad {
						t.Errorf("got %v, want Invalid %q: %s", e, bad, msg)
					}
				}
			}
			if !found {
				t.Errorf("no error at %s: %v", tt.path, errs)
			}
		})
	}
}
