package openapi

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/dnsplane/dnsplane/api"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/strictdecode"
)

// allKinds generates the definitions of every kind package api knows.
func allKinds(t testing.TB, v Version) (*Generator, map[string]string) {
	t.Helper()
	g := NewGenerator(v)
	names := map[string]string{}
	for _, gvk := range api.Kinds() {
		obj, _ := api.New(gvk)
		name, err := g.AddKind(gvk, obj)
		if err != nil {
			t.Fatal(err)
		}
		names[gvk.String()] = name
	}
	return g, names
}

// sampler builds a JSON value for a schema that sets every property (to
// bounded depth), and records the path of every object whose properties
// are closed (a struct): those are where an unknown key must be reported.
type sampler struct {
	defs     Definitions
	maxDepth int
	closed   []string // paths of struct objects, "" for the root
}

var sampleStrings = map[string]string{
	"date-time":     "2024-05-06T07:08:09.000000Z", // MicroTime needs the micros
	"byte":          "eA==",
	"int-or-string": "80%",
}

func (s *sampler) sample(sc *Schema, path string, depth int, stack []string) any {
	if name := sc.RefName(); name != "" {
		if slices.Contains(stack, name) {
			return nil // recursive type: stop
		}
		return s.sample(s.defs[name], path, depth, append(stack, name))
	}
	switch sc.Type {
	case "string":
		if v, ok := sampleStrings[sc.Format]; ok {
			return v
		}
		return "1m" // a valid Quantity (1 milli) and a valid metav1.Duration (1 minute)
	case "integer":
		return 1
	case "number":
		return 1.5
	case "boolean":
		return true
	case "array":
		if depth >= s.maxDepth {
			return []any{}
		}
		return []any{s.sample(sc.Items, path+"[0]", depth+1, stack)}
	}
	if sc.PreserveUnknownFields {
		return map[string]any{"anything": map[string]any{"goes": 1}}
	}
	out := map[string]any{}
	if sc.AdditionalProperties != nil {
		if depth < s.maxDepth {
			out["key"] = s.sample(sc.AdditionalProperties, join(path, "key"), depth+1, stack)
		}
		return out
	}
	s.closed = append(s.closed, path)
	if depth >= s.maxDepth {
		return out
	}
	for name, p := range sc.Properties {
		if v := s.sample(p, join(path, name), depth+1, stack); v != nil {
			out[name] = v
		}
	}
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// inject adds key to the object at path (as recorded by the sampler).
func inject(v any, path, key string) {
	obj := lookup(v, path).(map[string]any)
	obj[key] = "surprise"
}

func lookup(v any, path string) any {
	for path != "" {
		if strings.HasPrefix(path, "[0]") {
			v, path = v.([]any)[0], strings.TrimPrefix(strings.TrimPrefix(path, "[0]"), ".")
			continue
		}
		i := strings.IndexAny(path, ".[")
		key := path
		if i >= 0 {
			key, path = path[:i], strings.TrimPrefix(path[i:], ".")
		} else {
			path = ""
		}
		v = v.(map[string]any)[key]
	}
	return v
}

func decode(t *testing.T, gvk string, v any) []strictdecode.FieldProblem {
	t.Helper()
	body, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := strictdecode.Split(body)
	if err != nil || len(docs) != 1 {
		t.Fatalf("%s: split: %v", gvk, err)
	}
	var obj any
	for _, k := range api.Kinds() {
		if k.String() == gvk {
			obj, _ = api.New(k)
		}
	}
	problems, err := docs[0].Decode(obj)
	if err != nil {
		t.Fatalf("%s: the schema's sample does not decode: %v", gvk, err)
	}
	return problems
}

// TestSchemaAgreesWithDecoder is the agreement test: for every
// kind, a body setting every property of the schema (with a value of the
// schema's type) decodes without a fatal error and without an unknown
// field, and a key the schema lacks is reported unknown at every struct
// object of the body.
func TestSchemaAgreesWithDecoder(t *testing.T) {
	g, names := allKinds(t, V2)
	for gvk, name := range names {
		t.Run(gvk, func(t *testing.T) {
			s := &sampler{defs: g.Definitions(), maxDepth: 12}
			body := s.sample(g.Ref(name), "", 0, nil)
			if problems := decode(t, gvk, body); len(problems) != 0 {
				t.Fatalf("schema properties the decoder does not know: %v", problems)
			}
			if len(s.closed) < 3 {
				t.Fatalf("only %d objects sampled", len(s.closed))
			}
			// Inject an unknown key into every struct object, in batches
			// below the decoder's limit of 100 problems.
			const batch = 50
			for start := 0; start < len(s.closed); start += batch {
				paths := s.closed[start:min(start+batch, len(s.closed))]
				body := (&sampler{defs: g.Definitions(), maxDepth: s.maxDepth}).sample(g.Ref(name), "", 0, nil)
				var want []string
				for _, p := range paths {
					inject(body, p, "notInSchema")
					want = append(want, join(p, "notInSchema"))
				}
				var got []string
				for _, p := range decode(t, gvk, body) {
					if p.Type != "unknown field" {
						t.Errorf("problem %v", p)
					}
					got = append(got, p.Path)
				}
				sort.Strings(got)
				sort.Strings(want)
				if !slices.Equal(got, want) {
					t.Fatalf("unknown fields reported %v,\nwant %v", got, want)
				}
			}
			t.Logf("%d struct objects checked", len(s.closed))
		})
	}
}

func TestWrapperShadowing(t *testing.T) {
	for _, v := range []Version{V2, V3} {
		g, _ := allKinds(t, v)
		defs := g.Definitions()
		for _, tc := range []struct{ def, prop, ref string }{
			{"io.dnsplane.api.apps.v1.DeploymentSpec", "template", "io.dnsplane.api.core.v1.PodTemplateSpec"},
			{"io.dnsplane.api.apps.v1.StatefulSetSpec", "template", "io.dnsplane.api.core.v1.PodTemplateSpec"},
			{"io.dnsplane.api.batch.v1.CronJobSpec", "jobTemplate", "io.dnsplane.api.batch.v1.JobTemplateSpec"},
			{"io.dnsplane.api.core.v1.ReplicationControllerSpec", "template", "io.dnsplane.api.core.v1.PodTemplateSpec"},
			{"io.dnsplane.api.core.v1.PodTemplateSpec", "spec", "io.dnsplane.api.core.v1.PodSpec"},
			{"io.dnsplane.api.core.v1.PodSpec", "dnsParams", "io.dnsplane.api.core.v1.PodDNSParams"},
		} {
			p := defs[tc.def].Properties[tc.prop]
			if got := p.RefName(); got != tc.ref {
				t.Errorf("v%d %s.%s refers to %q, want %s", v+2, tc.def, tc.prop, got, tc.ref)
			}
			if p.Description == "" {
				t.Errorf("%s.%s: no description", tc.def, tc.prop)
			}
		}
		// The shadowed upstream types are never referenced.
		for _, name := range []string{"io.k8s.api.core.v1.PodTemplateSpec", "io.k8s.api.core.v1.PodSpec", "io.k8s.api.batch.v1.JobTemplateSpec"} {
			if _, ok := defs[name]; ok {
				t.Errorf("%s is defined", name)
			}
		}
		spec := defs["io.dnsplane.api.core.v1.PodSpec"]
		if want := (dpcorev1.PodSpec{}).SwaggerDoc()[""]; spec.Description != want {
			t.Errorf("PodSpec description %q", spec.Description)
		}
		if _, ok := spec.Properties["containers"]; !ok {
			t.Error("PodSpec lost the upstream fields")
		}
	}
}

func TestSchemaShapes(t *testing.T) {
	v2, _ := allKinds(t, V2)
	v3, _ := allKinds(t, V3)
	js := func(s *Schema) string {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	strip := func(s *Schema) *Schema { c := *s; c.Description = ""; return &c }
	for _, tc := range []struct {
		name           string
		defs           Definitions
		def, prop      string
		want           string
		withoutDescrip bool
	}{
		{"time v2", v2.Definitions(), "io.k8s.apimachinery.pkg.apis.meta.v1.Time", "", `{"type":"string","format":"date-time"}`, true},
		{"int-or-string v2", v2.Definitions(), "io.k8s.apimachinery.pkg.util.intstr.IntOrString", "", `{"type":"string","format":"int-or-string"}`, true},
		{"int-or-string v3", v3.Definitions(), "io.k8s.apimachinery.pkg.util.intstr.IntOrString", "", `{"oneOf":[{"type":"integer"},{"type":"string"}],"format":"int-or-string","x-kubernetes-int-or-string":true}`, true},
		{"quantity v2", v2.Definitions(), "io.k8s.apimachinery.pkg.api.resource.Quantity", "", `{"type":"string"}`, true},
		{"quantity v3", v3.Definitions(), "io.k8s.apimachinery.pkg.api.resource.Quantity", "", `{"oneOf":[{"type":"string"},{"type":"number"}]}`, true},
		{"fieldsV1", v2.Definitions(), "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1", "", `{"type":"object","x-kubernetes-preserve-unknown-fields":true}`, true},
		{"bytes", v2.Definitions(), "io.k8s.api.core.v1.Secret", "data", `{"type":"object","additionalProperties":{"type":"string","format":"byte"}}`, true},
		{"int64 pointer", v2.Definitions(), "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "generation", `{"type":"integer","format":"int64"}`, true},
		{"set", v2.Definitions(), "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "finalizers", `{"type":"array","items":{"type":"string"},"x-kubernetes-list-type":"set","x-kubernetes-patch-strategy":"merge"}`, true},
		{"map list v2", v2.Definitions(), "io.dnsplane.api.core.v1.PodSpec", "containers", `{"type":"array","items":{"$ref":"#/definitions/io.k8s.api.core.v1.Container"},"x-kubernetes-list-map-keys":["name"],"x-kubernetes-list-type":"map","x-kubernetes-patch-merge-key":"name","x-kubernetes-patch-strategy":"merge"}`, true},
		{"map list v3", v3.Definitions(), "io.dnsplane.api.core.v1.PodSpec", "containers", `{"type":"array","items":{"$ref":"#/components/schemas/io.k8s.api.core.v1.Container"},"x-kubernetes-list-map-keys":["name"],"x-kubernetes-list-type":"map","x-kubernetes-patch-merge-key":"name","x-kubernetes-patch-strategy":"merge"}`, true},
		{"atomic list", v2.Definitions(), "io.k8s.api.core.v1.Container", "args", `{"type":"array","items":{"type":"string"},"x-kubernetes-list-type":"atomic"}`, true},
		{"struct with patch strategy v2", v2.Definitions(), "io.dnsplane.api.apps.v1.DeploymentSpec", "strategy", `{"$ref":"#/definitions/io.k8s.api.apps.v1.DeploymentStrategy","x-kubernetes-patch-strategy":"retainKeys"}`, true},
		{"struct with patch strategy v3", v3.Definitions(), "io.dnsplane.api.apps.v1.DeploymentSpec", "strategy", `{"allOf":[{"$ref":"#/components/schemas/io.k8s.api.apps.v1.DeploymentStrategy"}],"x-kubernetes-patch-strategy":"retainKeys"}`, true},
		{"kind gvk", v2.Definitions(), "io.dnsplane.api.apps.v1.Deployment", "", `[{"group":"apps","kind":"Deployment","version":"v1"}]`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.defs[tc.def]
			if s == nil {
				t.Fatalf("no %s", tc.def)
			}
			if tc.prop != "" {
				s = s.Properties[tc.prop]
			}
			var got string
			if tc.withoutDescrip {
				got = js(strip(s))
			} else {
				b, _ := json.Marshal(s.GroupVersionKind)
				got = string(b)
			}
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestReachable(t *testing.T) {
	g, names := allKinds(t, V3)
	lease := g.Definitions().Reachable(names["coordination.k8s.io/v1, Kind=Lease"])
	var got []string
	for n := range lease {
		got = append(got, n)
	}
	sort.Strings(got)
	for _, want := range []string{"io.k8s.api.coordination.v1.Lease", "io.k8s.api.coordination.v1.LeaseSpec", "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime"} {
		if !slices.Contains(got, want) {
			t.Errorf("%s not reachable from Lease: %v", want, got)
		}
	}
	if slices.Contains(got, "io.k8s.api.core.v1.Container") {
		t.Error("Container reachable from Lease")
	}
	// Every $ref of every definition resolves.
	for name, s := range g.Definitions() {
		if s == nil {
			t.Errorf("%s: nil", name)
		}
	}
	for n := range g.Definitions().Reachable(slices.Collect(mapsKeys(names))...) {
		if _, ok := g.Definitions()[n]; !ok {
			t.Errorf("dangling %s", n)
		}
	}
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for _, v := range m {
			if !yield(v) {
				return
			}
		}
	}
}

func TestUnknownSelfDecodingType(t *testing.T) {
	type withJSON struct {
		V selfDecoding `json:"v"`
	}
	_, err := NewGenerator(V2).AddKind(mustGVK("x/v1", "K"), &withJSON{})
	if err == nil || !strings.Contains(err.Error(), "decodes itself") {
		t.Fatalf("err %v", err)
	}
}

type selfDecoding struct{}

func (*selfDecoding) UnmarshalJSON([]byte) error { return nil }

func BenchmarkGenerateAllKinds(b *testing.B) {
	for b.Loop() {
		allKinds(b, V3)
	}
}
