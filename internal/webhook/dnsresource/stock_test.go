package dnsresource

import (
	"context"
	"encoding/json"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	apiext "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
)

// stockServer is what a stock kube-apiserver does with a DNS write once
// the CRD that `dnsplane operator --print-crd` prints is installed:
// apiextensions-apiserver's own code, in-process. The request body is
// decoded into an unstructured object, defaulted and pruned by the
// structural schema (as the CRD handler's codec does), then the custom
// resource strategy validates it (OpenAPI schema, list types, CEL rules,
// with ratcheting on update), and only then does validating admission
// call the webhook (the generic registry's create and update validation
// runs after the strategy's).
type stockServer struct {
	structural *structuralschema.Structural
	strategy   interface {
		PrepareForCreate(context.Context, runtime.Object)
		PrepareForUpdate(context.Context, runtime.Object, runtime.Object)
		Validate(context.Context, runtime.Object) field.ErrorList
		ValidateUpdate(context.Context, runtime.Object, runtime.Object) field.ErrorList
	}
	webhook Validator
}

func newStockServer(t testing.TB, out []byte, webhook Validator) *stockServer {
	t.Helper()
	var v1crd apiextv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(out, &v1crd); err != nil {
		t.Fatal(err)
	}
	// As the CRD handler: the version's schema and status subresource,
	// converted to apiextensions' internal types.
	v := v1crd.Spec.Versions[0]
	var validation apiext.CustomResourceValidation
	if err := apiextv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v.Schema, &validation, nil); err != nil {
		t.Fatal(err)
	}
	var status apiext.CustomResourceSubresourceStatus
	if err := apiextv1.Convert_v1_CustomResourceSubresourceStatus_To_apiextensions_CustomResourceSubresourceStatus(v.Subresources.Status, &status, nil); err != nil {
		t.Fatal(err)
	}
	props := validation.OpenAPIV3Schema
	ss, err := structuralschema.NewStructural(props)
	if err != nil {
		t.Fatal(err)
	}
	ss = ss.DeepCopy()
	if err := structuraldefaulting.PruneDefaults(ss); err != nil {
		t.Fatal(err)
	}
	validator, _, err := apiservervalidation.NewSchemaValidator(props)
	if err != nil {
		t.Fatal(err)
	}
	statusSchema := props.Properties["status"]
	statusValidator, _, err := apiservervalidation.NewSchemaValidator(&statusSchema)
	if err != nil {
		t.Fatal(err)
	}
	gvk := schema.GroupVersionKind{Group: v1crd.Spec.Group, Version: v.Name, Kind: v1crd.Spec.Names.Kind}
	strategy := customresource.NewStrategy(nil, false, gvk, validator, statusValidator, ss, &status, nil, nil)
	return &stockServer{structural: ss, strategy: strategy, webhook: webhook}
}

// decode is the CRD handler's decoding: JSON into unstructured, pruned
// and defaulted.
func (s *stockServer) decode(t testing.TB, doc string) *unstructured.Unstructured {
	t.Helper()
	raw, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	// apimachinery's JSON decoding, as the server's: whole numbers are
	// int64, not float64.
	var m map[string]any
	if err := utiljson.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	structuralpruning.Prune(m, s.structural, true)
	structuraldefaulting.Default(m, s.structural)
	return &unstructured.Unstructured{Object: m}
}

// stockAnswer is the stock server's answer to a write: the errors of the
// strategy (schema and CEL) or, when it passed, the webhook's.
type stockAnswer struct {
	schemaErrs field.ErrorList
	webhook    *admissionv1.AdmissionResponse
}

// finding is one field error as a client sees it: the field path and
// the message without it ("Invalid value: …: detail").
type finding struct{ path, body string }

func findings(errs field.ErrorList) []finding {
	var out []finding
	for _, e := range errs {
		out = append(out, finding{e.Field, e.ErrorBody()})
	}
	return out
}

// refused returns what the answer refuses the write with (nothing when
// it is allowed).
func (a stockAnswer) refused(t testing.TB) []finding {
	t.Helper()
	if len(a.schemaErrs) > 0 {
		return findings(a.schemaErrs)
	}
	if a.webhook == nil || a.webhook.Allowed {
		return nil
	}
	return causes(t, a.webhook)
}

// write runs a create (old == "") or an update of old to doc.
func (s *stockServer) write(t testing.TB, doc, old string) stockAnswer {
	t.Helper()
	ctx := context.Background()
	obj := s.decode(t, doc)
	req := &admissionv1.AdmissionRequest{
		UID:      "1",
		Kind:     metaGVK(),
		Resource: Resource,
		Name:     obj.GetName(),
	}
	var errs field.ErrorList
	if old == "" {
		s.strategy.PrepareForCreate(ctx, obj)
		errs = s.strategy.Validate(ctx, obj)
		req.Operation = admissionv1.Create
	} else {
		oldObj := s.decode(t, old)
		// The stored object's version, which an update must name.
		oldObj.SetResourceVersion("1")
		obj.SetResourceVersion("1")
		s.strategy.PrepareForUpdate(ctx, obj, oldObj)
		errs = s.strategy.ValidateUpdate(ctx, obj, oldObj)
		req.Operation = admissionv1.Update
		req.OldObject.Raw = mustJSON(t, oldObj.Object)
	}
	if len(errs) > 0 {
		return stockAnswer{schemaErrs: errs}
	}
	req.Object.Raw = mustJSON(t, obj.Object)
	return stockAnswer{webhook: s.webhook.Review(ctx, req)}
}

func metaGVK() metav1.GroupVersionKind {
	return metav1.GroupVersionKind{Group: operatorv1.GroupName, Version: "v1", Kind: "DNS"}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// causes reads a webhook's denial as a client reads the 422's causes.
func causes(t testing.TB, resp *admissionv1.AdmissionResponse) []finding {
	t.Helper()
	if resp.Result == nil || resp.Result.Details == nil || resp.Result.Code != 422 {
		t.Fatalf("denial is not a 422 with causes: %+v", resp.Result)
	}
	var out []finding
	for _, c := range resp.Result.Details.Causes {
		out = append(out, finding{c.Field, c.Message})
	}
	return out
}
