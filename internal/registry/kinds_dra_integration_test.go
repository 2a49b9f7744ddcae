package registry_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/dnsplane/dnsplane/api"
)

// Cases of the resource.k8s.io and admission policy kinds the controller
// manager and scheduler list (issue 19), run by
// TestUpstreamValidationControllerKinds. Their validation compiles CEL
// (device selectors, policy expressions) with upstream's environments.

func deviceClass(name, expr string) *resourcev1.DeviceClass {
	return &resourcev1.DeviceClass{TypeMeta: metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "DeviceClass"}, ObjectMeta: meta(name),
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: expr}}}}}
}

func deviceClassCases(string) []kindCase {
	return []kindCase{
		{name: "valid", obj: deviceClass("gpu", `device.driver == "gpu.example.com"`)},
		{name: "CEL that does not compile", obj: deviceClass("bad-cel", `device.driver ==`),
			causes: []metav1.StatusCause{cause(invalid, "spec.selectors[0].cel.expression",
				"Invalid value: \"device.driver ==\": compilation failed: ERROR: <input>:1:17: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | device.driver ==\n | ................^")}},
	}
}

func resourceClaim(name, request string, mutate ...func(*resourcev1.ResourceClaim)) *resourcev1.ResourceClaim {
	c := &resourcev1.ResourceClaim{TypeMeta: metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceClaim"}, ObjectMeta: meta(name),
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{
			{Name: request, Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu"}}}}}}
	for _, m := range mutate {
		m(c)
	}
	return c
}

func adminAccess(c *resourcev1.ResourceClaim) {
	c.Spec.Devices.Requests[0].Exactly.AdminAccess = ptr(true)
}

// allocated allocates the claim's request on node-1, with admin access or
// not.
func allocated(admin bool) func(*resourcev1.ResourceClaim) {
	return func(c *resourcev1.ResourceClaim) {
		c.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
			{Request: "gpu", Driver: "gpu.example.com", Pool: "pool-a", Device: "gpu-0", AdminAccess: ptr(admin)}}}}
	}
}

func adminAccessForbidden(path string) metav1.StatusCause {
	return cause(forbidden, path, "Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on the containing namespace")
}

// checkAdminAccess: in a namespace labelled for it, a claim and a
// template may ask for admin access, and an allocation may grant it.
func checkAdminAccess(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dra-admin", Labels: map[string]string{"resource.kubernetes.io/admin-access": "true"}}}
	if _, err := c.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	claims := kindTester{client: c, res: mustLookup(t, resourcev1.SchemeGroupVersion.WithKind("ResourceClaim")), ns: ns.Name}
	claims.run(t, []kindCase{
		{name: "claim", obj: resourceClaim("admin", "gpu", adminAccess)},
		{name: "allocation", before: resourceClaim("alloc", "gpu", adminAccess), status: true,
			obj: resourceClaim("alloc", "gpu", adminAccess, allocated(true))},
	})
	templates := kindTester{client: c, res: mustLookup(t, resourcev1.SchemeGroupVersion.WithKind("ResourceClaimTemplate")), ns: ns.Name}
	tmpl := resourceClaimTemplate("admin", "gpu")
	tmpl.Spec.Spec.Devices.Requests[0].Exactly.AdminAccess = ptr(true)
	templates.run(t, []kindCase{{name: "template", obj: tmpl}})
}

func mustLookup(t *testing.T, gvk schema.GroupVersionKind) api.Resource {
	t.Helper()
	r, ok := api.Lookup(gvk)
	if !ok {
		t.Fatalf("%s is not served", gvk)
	}
	return r
}

func resourceClaimCases(string) []kindCase {
	return []kindCase{
		// The status a client sends on create is dropped (checked in defaults).
		{name: "valid", obj: resourceClaim("valid", "gpu", func(c *resourcev1.ResourceClaim) {
			c.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "p", UID: "u"}}
		})},
		// Admin access needs the namespace label (checkAdminAccess has
		// the labelled namespace).
		{name: "admin access", obj: resourceClaim("admin", "gpu", adminAccess),
			causes: []metav1.StatusCause{adminAccessForbidden("spec.devices.requests[0].adminAccess")}},
		{name: "status grants admin access", before: resourceClaim("status-admin", "gpu"), status: true,
			obj:    resourceClaim("status-admin", "gpu", allocated(true)),
			causes: []metav1.StatusCause{adminAccessForbidden("status.allocation.devices.results[0].adminAccess")}},
		{name: "status allocates", before: resourceClaim("status-ok", "gpu"), status: true,
			obj: resourceClaim("status-ok", "gpu", allocated(false))},
		{name: "request name not a DNS label", obj: resourceClaim("bad-request", "GPU_1"),
			causes: []metav1.StatusCause{cause(invalid, "spec.devices.requests[0].name",
				`Invalid value: "GPU_1": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`)}},
		{name: "update changes the spec", before: resourceClaim("upd", "gpu"), obj: resourceClaim("upd", "gpu2"),
			causes: []metav1.StatusCause{cause(invalid, "spec", "Invalid value: null: field is immutable")}},
		{name: "status reserved without allocation", before: resourceClaim("status-bad", "gpu"), status: true,
			obj: resourceClaim("status-bad", "gpu", func(c *resourcev1.ResourceClaim) {
				c.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "p", UID: "u"}}
			}),
			causes: []metav1.StatusCause{cause(forbidden, "status.reservedFor", "Forbidden: may not be specified when `allocated` is not set")}},
	}
}

func resourceClaimTemplate(name, class string) *resourcev1.ResourceClaimTemplate {
	return &resourcev1.ResourceClaimTemplate{TypeMeta: metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceClaimTemplate"}, ObjectMeta: meta(name),
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{
			{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class}}}}}}}
}

func resourceClaimTemplateCases(string) []kindCase {
	return []kindCase{
		{name: "valid", obj: resourceClaimTemplate("valid", "gpu")},
		{name: "admin access", obj: func() *resourcev1.ResourceClaimTemplate {
			t := resourceClaimTemplate("admin", "gpu")
			t.Spec.Spec.Devices.Requests[0].Exactly.AdminAccess = ptr(true)
			return t
		}(), causes: []metav1.StatusCause{adminAccessForbidden("spec.devices.requests[0].adminAccess")}},
		{name: "no device class", obj: resourceClaimTemplate("no-class", ""),
			causes: []metav1.StatusCause{cause(required, "spec.spec.devices.requests[0].exactly.deviceClassName", "Required value")}},
	}
}

func resourceSlice(name string, node *string) *resourcev1.ResourceSlice {
	return &resourcev1.ResourceSlice{TypeMeta: metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceSlice"}, ObjectMeta: meta(name),
		Spec: resourcev1.ResourceSliceSpec{Driver: "gpu.example.com", NodeName: node,
			Pool:    resourcev1.ResourcePool{Name: "pool-a", ResourceSliceCount: 1},
			Devices: []resourcev1.Device{{Name: "gpu-0"}}}}
}

func resourceSliceCases(string) []kindCase {
	return []kindCase{
		{name: "valid", obj: resourceSlice("node-1-gpu", ptr("node-1"))},
		{name: "no node selection", obj: resourceSlice("nowhere", nil),
			causes: []metav1.StatusCause{cause(required, "spec", "Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required")}},
	}
}

func deviceTaintRule(name string, effect resourcev1.DeviceTaintEffect) *resourcev1.DeviceTaintRule {
	return &resourcev1.DeviceTaintRule{TypeMeta: metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "DeviceTaintRule"}, ObjectMeta: meta(name),
		Spec: resourcev1.DeviceTaintRuleSpec{DeviceSelector: &resourcev1.DeviceTaintSelector{Driver: ptr("gpu.example.com")},
			Taint: resourcev1.DeviceTaint{Key: "example.com/maintenance", Effect: effect}}}
}

// withTimeAdded sets r's timeAdded to a time long past (it defaults to
// the time of the create).
func withTimeAdded(r *resourcev1.DeviceTaintRule) *resourcev1.DeviceTaintRule {
	r.Spec.Taint.TimeAdded = &metav1.Time{Time: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)}
	return r
}

func deviceTaintRuleCases(string) []kindCase {
	return []kindCase{
		{name: "valid", obj: deviceTaintRule("maint", resourcev1.DeviceTaintEffectNoSchedule)},
		{name: "unknown effect", obj: deviceTaintRule("bad-effect", "Sometimes"),
			causes: []metav1.StatusCause{cause(unsupported, "spec.taint.effect", `Unsupported value: "Sometimes": supported values: "NoExecute", "NoSchedule", "None"`)}},
		// Checked in defaults: an update that changes the effect and keeps
		// timeAdded (as kubectl edit does) gets a new timeAdded.
		{name: "update changes the effect", before: withTimeAdded(deviceTaintRule("escalate", resourcev1.DeviceTaintEffectNoSchedule)),
			obj: withTimeAdded(deviceTaintRule("escalate", resourcev1.DeviceTaintEffectNoExecute))},
	}
}

// checkDRADefaults reads back what the resource.k8s.io cases stored.
func checkDRADefaults(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	claim, err := c.ResourceV1().ResourceClaims("resourceclaim").Get(ctx, "valid", metav1.GetOptions{})
	if err != nil || len(claim.Status.ReservedFor) != 0 || claim.Spec.Devices.Requests[0].Exactly.AllocationMode != resourcev1.DeviceAllocationModeExactCount ||
		claim.Spec.Devices.Requests[0].Exactly.Count != 1 {
		t.Errorf("resource claim (status dropped, allocationMode and count defaulted): %v %+v", err, claim)
	}
	rule, err := c.ResourceV1().DeviceTaintRules().Get(ctx, "escalate", metav1.GetOptions{})
	if err != nil || rule.Spec.Taint.Effect != resourcev1.DeviceTaintEffectNoExecute || rule.Spec.Taint.TimeAdded == nil ||
		time.Since(rule.Spec.Taint.TimeAdded.Time) > time.Minute {
		t.Errorf("device taint rule (a changed effect is stamped): %v %+v", err, rule)
	}
}
