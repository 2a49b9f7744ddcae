package openapi

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	dpappsv1 "github.com/dnsplane/dnsplane/api/apps/v1"
	dpbatchv1 "github.com/dnsplane/dnsplane/api/batch/v1"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	dpoperatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
)

type docInner struct {
	A string `json:"a"`
	B string `json:"b"`
}

func (docInner) SwaggerDoc() map[string]string {
	return map[string]string{"": "inner", "a": "inner a", "b": "inner b"}
}

// docWrapper describes b, which it inherits, and c, which it declares.
type docWrapper struct {
	docInner `json:",inline"`
	C        string `json:"c"`
}

func (docWrapper) SwaggerDoc() map[string]string {
	return map[string]string{"b": "wrapper b", "c": "wrapper c"}
}

// docPlain has only the SwaggerDoc promoted from docInner.
type docPlain struct {
	docInner `json:",inline"`
}

// docOuter reaches docInner's fields through two embeddings, one a pointer.
type docOuter struct {
	*docWrapper `json:",inline"`
}

func TestFieldDescription(t *testing.T) {
	// A wrapper of the same name as the struct it embeds, redeclaring a
	// without a description (as a carrier redeclares template).
	type inner = docInner
	type docInner struct {
		inner `json:",inline"`
		A     int `json:"a"`
	}
	for _, tc := range []struct {
		name  string
		typ   reflect.Type
		field string
		want  string
	}{
		{"inherited, the wrapper silent", reflect.TypeFor[docWrapper](), "a", "inner a"},
		{"inherited, the wrapper overrides", reflect.TypeFor[docWrapper](), "b", "wrapper b"},
		{"declared by the wrapper", reflect.TypeFor[docWrapper](), "c", "wrapper c"},
		{"promoted SwaggerDoc", reflect.TypeFor[docPlain](), "b", "inner b"},
		{"outermost description first, through a pointer", reflect.TypeFor[docOuter](), "b", "wrapper b"},
		{"two levels down", reflect.TypeFor[docOuter](), "a", "inner a"},
		{"redeclared without a description", reflect.TypeFor[docInner](), "a", "inner a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got *string
			for _, f := range jsonFields(tc.typ) {
				if f.name == tc.field {
					d := fieldDescription(tc.typ, f)
					got = &d
				}
			}
			switch {
			case got == nil:
				t.Fatalf("%v has no JSON field %q", tc.typ, tc.field)
			case *got != tc.want:
				t.Errorf("description of %v.%s = %q, want %q", tc.typ, tc.field, *got, tc.want)
			}
		})
	}
}

// TestServedDescriptions checks that the fields dnsplane declares, and the
// ones it redeclares, are described by its own doc comments, and the
// fields inherited from k8s.io/api by upstream's.
func TestServedDescriptions(t *testing.T) {
	const (
		core = "io.dnsplane.api.core.v1."
		apps = "io.dnsplane.api.apps.v1."
		btch = "io.dnsplane.api.batch.v1."
		op   = "io.dnsplane.api.operator.v1."
	)
	for _, v := range []Version{V2, V3} {
		defs := func() Definitions { g, _ := allKinds(t, v); return g.Definitions() }()
		for _, tc := range []struct {
			def, prop string // prop "" is the definition's own description
			want      string
		}{
			{core + "PodSpec", "", dpcorev1.PodSpec{}.SwaggerDoc()[""]},
			{core + "PodSpec", "dnsParams", dpcorev1.PodSpec{}.SwaggerDoc()["dnsParams"]},
			{core + "PodSpec", "dnsPolicy", dpcorev1.PodSpec{}.SwaggerDoc()["dnsPolicy"]},
			{core + "PodSpec", "containers", corev1.PodSpec{}.SwaggerDoc()["containers"]},
			{core + "PodSpec", "dnsConfig", corev1.PodSpec{}.SwaggerDoc()["dnsConfig"]},
			{core + "PodDNSParams", "custom", dpcorev1.PodDNSParams{}.SwaggerDoc()["custom"]},
			{core + "PodDNSParamsCustom", "", dpcorev1.PodDNSParamsCustom{}.SwaggerDoc()[""]},
			{core + "PodDNSParamsCustom", "search", dpcorev1.PodDNSParamsCustom{}.SwaggerDoc()["search"]},
			{core + "Pod", "", dpcorev1.Pod{}.SwaggerDoc()[""]},
			{core + "Pod", "spec", dpcorev1.Pod{}.SwaggerDoc()["spec"]},
			{core + "Pod", "status", dpcorev1.Pod{}.SwaggerDoc()["status"]},
			{core + "PodTemplateSpec", "spec", dpcorev1.PodTemplateSpec{}.SwaggerDoc()["spec"]},
			{core + "ReplicationControllerSpec", "template", dpcorev1.ReplicationControllerSpec{}.SwaggerDoc()["template"]},
			{core + "ReplicationControllerSpec", "replicas", corev1.ReplicationControllerSpec{}.SwaggerDoc()["replicas"]},
			{apps + "DeploymentSpec", "template", dpappsv1.DeploymentSpec{}.SwaggerDoc()["template"]},
			{apps + "DeploymentSpec", "replicas", appsv1.DeploymentSpec{}.SwaggerDoc()["replicas"]},
			{apps + "DaemonSetSpec", "template", dpappsv1.DaemonSetSpec{}.SwaggerDoc()["template"]},
			{btch + "JobSpec", "template", dpbatchv1.JobSpec{}.SwaggerDoc()["template"]},
			{btch + "CronJobSpec", "jobTemplate", dpbatchv1.CronJobSpec{}.SwaggerDoc()["jobTemplate"]},
			{btch + "CronJobSpec", "schedule", batchv1.CronJobSpec{}.SwaggerDoc()["schedule"]},
			{op + "DNS", "", dpoperatorv1.DNS{}.SwaggerDoc()[""]},
			{op + "DNSSpec", "", dpoperatorv1.DNSSpec{}.SwaggerDoc()[""]},
		} {
			name := fmt.Sprintf("v%d %s.%s", v+2, tc.def, tc.prop)
			if tc.want == "" {
				t.Errorf("%s: the expected description is empty", name)
				continue
			}
			def, ok := defs[tc.def]
			if !ok {
				t.Errorf("%s: no definition", name)
				continue
			}
			got := def.Description
			if tc.prop != "" {
				p, ok := def.Properties[tc.prop]
				if !ok {
					t.Errorf("%s: no property", name)
					continue
				}
				got = p.Description
			}
			if got != tc.want {
				t.Errorf("%s: description %q, want %q", name, got, tc.want)
			}
		}
	}
}

// TestDNSPolicyDescription checks that dnsPolicy lists every policy
// dnsplane accepts, one line each in DNSPolicies' order, instead of
// upstream's text, which names four. Every pod spec path (a pod's, each
// carrier's template) refers to this one definition: TestWrapperShadowing
// checks that upstream's PodSpec is never defined.
func TestDNSPolicyDescription(t *testing.T) {
	g, _ := allKinds(t, V3)
	got := g.Definitions()["io.dnsplane.api.core.v1.PodSpec"].Properties["dnsPolicy"].Description
	if upstream := (corev1.PodSpec{}).SwaggerDoc()["dnsPolicy"]; strings.Contains(got, upstream) {
		t.Errorf("dnsPolicy keeps upstream's description %q", upstream)
	}
	_, list, ok := strings.Cut(got, "\n\nPossible enum values:\n")
	if !ok {
		t.Fatalf("dnsPolicy: no list of values in %q", got)
	}
	lines := strings.Split(list, "\n")
	policies := dpcorev1.DNSPolicies()
	if len(lines) != len(policies) {
		t.Fatalf("dnsPolicy lists %d values, want %d: %q", len(lines), len(policies), list)
	}
	for i, p := range policies {
		prefix := fmt.Sprintf(" - `%q` ", string(p))
		if !strings.HasPrefix(lines[i], prefix) || len(lines[i]) == len(prefix) {
			t.Errorf("line %d of the values is %q, want %q and a description", i, lines[i], prefix)
		}
	}
}

// TestOurTypesAreDocumented requires a description for every type and
// field dnsplane declares in api/, so kubectl explain never shows <empty>
// for them.
func TestOurTypesAreDocumented(t *testing.T) {
	g, _ := allKinds(t, V3)
	for name, def := range g.Definitions() {
		if !strings.HasPrefix(name, "io.dnsplane.api.") {
			continue
		}
		if def.Description == "" {
			t.Errorf("%s has no description", name)
		}
		for prop, p := range def.Properties {
			if p.Description == "" {
				t.Errorf("%s.%s has no description", name, prop)
			}
		}
	}
}
