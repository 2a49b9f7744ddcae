package crd

import (
	"context"
	"slices"
	"strings"
	"testing"

	apiext "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/dnsplane/dnsplane/internal/printers"
)

func TestDNS(t *testing.T) {
	out, err := DNS()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "$ref") {
		t.Fatalf("a CRD schema may not contain $ref:\n%s", out)
	}
	var crd struct {
		Spec struct {
			Scope    string
			Versions []struct {
				Name   string
				Schema struct {
					OpenAPIV3Schema struct {
						Properties map[string]struct {
							Type       string
							Properties map[string]any
						}
					}
				}
			}
		}
	}
	if err := yaml.Unmarshal(out, &crd); err != nil {
		t.Fatal(err)
	}
	if crd.Spec.Scope != "Cluster" || len(crd.Spec.Versions) != 1 {
		t.Fatalf("CRD spec: %+v", crd.Spec)
	}
	props := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties
	for _, p := range []string{"spec", "status", "metadata"} {
		if props[p].Type != "object" {
			t.Errorf("%s: type %q, want object", p, props[p].Type)
		}
	}
	for _, p := range []string{"pluginConfig", "upstreamResolvers", "cache", "logLevel", "managementState"} {
		if _, ok := props["spec"].Properties[p]; !ok {
			t.Errorf("spec.%s missing", p)
		}
	}
}

// TestDNSValidCRD checks the CRD's schema is structural by the API
// server's own rules (apiextensions-apiserver's; TestDNSAcceptedByKubeAPIServer
// runs the whole CRD validation) and that the +kubebuilder markers reached
// the schema, by value.
func TestDNSValidCRD(t *testing.T) {
	v1crd := printedCRD(t)
	scheme := apiextScheme()
	var props apiext.JSONSchemaProps
	if err := scheme.Convert(v1crd.Spec.Versions[0].Schema.OpenAPIV3Schema, &props, nil); err != nil {
		t.Fatal(err)
	}
	ss, err := structuralschema.NewStructural(&props)
	if err != nil {
		t.Fatal(err)
	}
	if errs := structuralschema.ValidateStructural(field.NewPath("openAPIV3Schema"), ss); len(errs) > 0 {
		t.Errorf("the CRD's schema is not structural: %v", errs.ToAggregate())
	}
	spec := v1crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	ll := spec.Properties["logLevel"]
	if len(ll.Enum) != 3 || ll.Default == nil || string(ll.Default.Raw) != `"Normal"` {
		t.Errorf("spec.logLevel: enum %v, default %v", ll.Enum, ll.Default)
	}
	ur := spec.Properties["upstreamResolvers"]
	ups := ur.Properties["upstreams"]
	if ups.Default == nil || string(ups.Default.Raw) != `[{"type":"SystemResolvConf"}]` || ups.MaxItems == nil || *ups.MaxItems != 15 {
		t.Errorf("spec.upstreamResolvers.upstreams: default %v, maxItems %v", ups.Default, ups.MaxItems)
	}
	if fps := spec.Properties["pluginConfig"].Properties["forwardPlugins"]; fps.MaxItems == nil || *fps.MaxItems != 150 {
		t.Errorf("spec.pluginConfig.forwardPlugins: maxItems %v, want 150 (dnsspec.MaxForwardPlugins)", fps.MaxItems)
	}
	port := ups.Items.Schema.Properties["port"]
	if port.Minimum == nil || *port.Minimum != 1 || port.Maximum == nil || *port.Maximum != 65535 {
		t.Errorf("upstreams[].port: minimum %v, maximum %v", port.Minimum, port.Maximum)
	}
}

// TestDNSAcceptedByKubeAPIServer runs the validation kube-apiserver runs
// on a CustomResourceDefinition create (apiextensions-apiserver's
// ValidateCustomResourceDefinition, CEL and defaults included): a real
// 1.37 server refused the CRD --print-crd printed (issue 30: a list-map
// key without a default that is not required).
func TestDNSAcceptedByKubeAPIServer(t *testing.T) {
	v1crd := printedCRD(t)
	scheme := apiextScheme()
	var crd apiext.CustomResourceDefinition
	if err := scheme.Convert(v1crd, &crd, nil); err != nil {
		t.Fatal(err)
	}
	// What the CRD strategy's PrepareForCreate sets before validation.
	crd.Status.StoredVersions = []string{"v1"}
	if errs := apiextvalidation.ValidateCustomResourceDefinition(context.Background(), &crd); len(errs) > 0 {
		t.Errorf("kube-apiserver refuses the DNS CRD:\n%s", errs.ToAggregate())
	}
}

// TestPrinterColumnsMatchServer: `kubectl get dnses` shows the same
// columns on any cluster as on dnsplane's API server.
func TestPrinterColumnsMatchServer(t *testing.T) {
	v1crd := printedCRD(t)
	got := []string{"Name"}
	for _, c := range v1crd.Spec.Versions[0].AdditionalPrinterColumns {
		got = append(got, c.Name)
	}
	p, ok := printers.For(schema.GroupKind{Group: "operator.dnsplane.io", Kind: "DNS"})
	if !ok {
		t.Fatal("dnsplane's API server has no DNS printer")
	}
	var want []string
	for _, c := range p.Columns() {
		want = append(want, c.Name)
	}
	if !slices.Equal(got, want) {
		t.Errorf("CRD printer columns %v, API server's %v", got, want)
	}
}

// printedCRD is the CRD --print-crd prints, decoded strictly.
func printedCRD(t *testing.T) *apiextv1.CustomResourceDefinition {
	t.Helper()
	out, err := DNS()
	if err != nil {
		t.Fatal(err)
	}
	var v1crd apiextv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(out, &v1crd); err != nil {
		t.Fatal(err)
	}
	return &v1crd
}

// apiextScheme converts between apiextensions' v1 and internal types.
func apiextScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	return scheme
}
