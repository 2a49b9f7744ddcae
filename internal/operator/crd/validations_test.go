package crd

import (
	"testing"

	apiext "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apimachinery/pkg/util/version"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// TestRulesCompileOn130: every CEL rule of the CRD compiles in the
// environment of kube-apiserver 1.30, the oldest server issue 30 targets
// (a newer server's CRD validation, TestDNSAcceptedByKubeAPIServer,
// would accept libraries a 1.30 server does not have), within the
// per-call cost limit. The count keeps a rule from being dropped by a
// mistyped path.
func TestRulesCompileOn130(t *testing.T) {
	v1crd := printedCRD(t)
	var props apiext.JSONSchemaProps
	if err := apiextScheme().Convert(v1crd.Spec.Versions[0].Schema.OpenAPIV3Schema, &props, nil); err != nil {
		t.Fatal(err)
	}
	ss, err := structuralschema.NewStructural(&props)
	if err != nil {
		t.Fatal(err)
	}
	envSet := environment.MustBaseEnvSet(version.MajorMinor(1, 30))
	rules := 0
	var walk func(s *structuralschema.Structural, root bool, path string)
	walk = func(s *structuralschema.Structural, root bool, path string) {
		if len(s.XValidations) > 0 {
			results, err := cel.Compile(s, model.SchemaDeclType(s, root), celconfig.PerCallLimit, envSet, cel.NewExpressionsEnvLoader())
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			for i, r := range results {
				rules++
				if r.Error != nil {
					t.Errorf("%s rule %q: %v", path, s.XValidations[i].Rule, r.Error)
				}
				if r.MaxCost > celconfig.PerCallLimit {
					t.Errorf("%s rule %q: cost %d over the per-call limit", path, s.XValidations[i].Rule, r.MaxCost)
				}
			}
		}
		for name, p := range s.Properties {
			walk(&p, false, path+"."+name)
		}
		if s.Items != nil {
			walk(s.Items, false, path+"[]")
		}
	}
	walk(ss, true, "")
	if want := 27; rules != want {
		t.Errorf("%d CEL rules, want %d", rules, want)
	}
}
