package poddns

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/dnsparams"
	"github.com/dnsplane/dnsplane/internal/resolvconf"
)

// templateKind is one reviewed kind and where its pod template sits, as
// kube-apiserver sends it (JSON of the upstream type).
type templateKind struct {
	apiVersion, kind string
	resource         metav1.GroupVersionResource
	path             []string // to the pod template; nil for a Pod
}

var templateKinds = []templateKind{
	{"v1", "Pod", metav1.GroupVersionResource{Version: "v1", Resource: "pods"}, nil},
	{"v1", "PodTemplate", metav1.GroupVersionResource{Version: "v1", Resource: "podtemplates"}, []string{"template"}},
	{"v1", "ReplicationController", metav1.GroupVersionResource{Version: "v1", Resource: "replicationcontrollers"}, []string{"spec", "template"}},
	{"apps/v1", "Deployment", metav1.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, []string{"spec", "template"}},
	{"apps/v1", "ReplicaSet", metav1.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}, []string{"spec", "template"}},
	{"apps/v1", "StatefulSet", metav1.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}, []string{"spec", "template"}},
	{"apps/v1", "DaemonSet", metav1.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}, []string{"spec", "template"}},
	{"batch/v1", "Job", metav1.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}, []string{"spec", "template"}},
	{"batch/v1", "CronJob", metav1.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}, []string{"spec", "jobTemplate", "spec", "template"}},
}

// object is the JSON kube-apiserver would send for k with the pod template
// tmpl (metadata and spec), plus a field dnsplane's types do not know, which
// the patch must leave alone.
func (k templateKind) object(t *testing.T, tmpl map[string]any) []byte {
	t.Helper()
	obj := map[string]any{
		"apiVersion": k.apiVersion, "kind": k.kind,
		"metadata":    map[string]any{"name": "web", "namespace": "ns1", "uid": "u1"},
		"futureField": map[string]any{"kept": true},
	}
	cur := obj
	for _, p := range k.path {
		next, ok := cur[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[p] = next
		}
		cur = next
	}
	if k.path == nil {
		md := obj["metadata"].(map[string]any)
		if a, ok := tmpl["metadata"].(map[string]any)["annotations"]; ok {
			md["annotations"] = a
		}
		obj["spec"] = tmpl["spec"]
	} else {
		cur["metadata"], cur["spec"] = tmpl["metadata"], tmpl["spec"]
	}
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// template reads the pod template (metadata, spec) back from raw.
func (k templateKind) template(t *testing.T, raw []byte) (metav1.ObjectMeta, corev1.PodSpec, map[string]any) {
	t.Helper()
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	cur := obj
	for _, p := range k.path {
		cur = cur[p].(map[string]any)
	}
	var meta metav1.ObjectMeta
	var spec corev1.PodSpec
	mb, _ := json.Marshal(cur["metadata"])
	sb, _ := json.Marshal(cur["spec"])
	if err := json.Unmarshal(mb, &meta); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(sb, &spec); err != nil {
		t.Fatal(err)
	}
	return meta, spec, obj
}

func customTemplate(search []string, dnsConfig *corev1.PodDNSConfig) map[string]any {
	spec := map[string]any{
		"dnsPolicy":  "Custom",
		"containers": []any{map[string]any{"name": "c", "image": "registry.k8s.io/pause:3.10"}},
	}
	if dnsConfig != nil {
		spec["dnsConfig"] = dnsConfig
	}
	return map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app": "web"}, "annotations": map[string]any{
			dnsparams.Annotation: dnsparams.Encode(&dpcorev1.PodDNSParams{Custom: &dpcorev1.PodDNSParamsCustom{Search: search, Options: []string{"ndots:2"}}}),
		}},
		"spec": spec,
	}
}

func review(t *testing.T, rev *Reviewer, mutate bool, k templateKind, op admissionv1.Operation, obj, old []byte) (*admissionv1.AdmissionResponse, []byte) {
	t.Helper()
	req := &admissionv1.AdmissionRequest{
		UID: types.UID("req-1"), Kind: metav1.GroupVersionKind{Kind: k.kind}, Resource: k.resource,
		Namespace: "ns1", Name: "web", Operation: op,
		Object: runtime.RawExtension{Raw: obj},
	}
	if old != nil {
		req.OldObject = runtime.RawExtension{Raw: old}
	}
	var resp *admissionv1.AdmissionResponse
	if mutate {
		resp = rev.Mutate(context.Background(), req)
	} else {
		resp = rev.Validate(context.Background(), req)
	}
	if resp.UID != req.UID {
		t.Errorf("response UID %q, want %q", resp.UID, req.UID)
	}
	if !resp.Allowed || len(resp.Patch) == 0 {
		return resp, obj
	}
	if resp.PatchType == nil || *resp.PatchType != admissionv1.PatchTypeJSONPatch {
		t.Fatalf("patch type %v, want JSONPatch", resp.PatchType)
	}
	p, err := jsonpatch.DecodePatch(resp.Patch)
	if err != nil {
		t.Fatalf("decoding patch %s: %v", resp.Patch, err)
	}
	out, err := p.Apply(obj)
	if err != nil {
		t.Fatalf("applying patch %s: %v", resp.Patch, err)
	}
	return resp, out
}

// TestTemplatesRewrittenAcrossKinds: a workload written with Custom is
// admitted with its template rewritten (None + dnsConfig, both
// annotations), the pods its controller makes from that template come out
// the same at their own admission, a change of only the parameters changes
// the template (so it rolls out) without keeping the old search list, and
// the validating webhook accepts every stage.
func TestTemplatesRewrittenAcrossKinds(t *testing.T) {
	t.Parallel()
	rev := NewReviewer(stock, nil)
	userCfg := &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}, Searches: []string{"user.example"}}
	for _, k := range templateKinds {
		t.Run(k.kind, func(t *testing.T) {
			t.Parallel()
			created := k.object(t, customTemplate([]string{"$(NAMESPACE).svc.$(CLUSTER)", "$(HOST)"}, userCfg))
			resp, rewritten := review(t, rev, true, k, admissionv1.Create, created, nil)
			if !resp.Allowed || len(resp.Patch) == 0 {
				t.Fatalf("create: allowed=%v patch=%s result=%+v", resp.Allowed, resp.Patch, resp.Result)
			}
			meta, spec, whole := k.template(t, rewritten)
			if whole["futureField"] == nil {
				t.Errorf("the patch dropped a field dnsplane's types do not know: %s", resp.Patch)
			}
			want := resolvconf.Config{
				Nameservers: []string{"10.96.0.10", "1.1.1.1"},
				Searches:    []string{"ns1.svc.cluster.local", "corp.example.com", "example.com", "user.example"},
				Options:     []string{"ndots:2"},
			}
			checkTemplate(t, "created", meta, spec, dpcorev1.DNSCustom, want)
			if v, _ := review(t, rev, false, k, admissionv1.Create, rewritten, nil); !v.Allowed {
				t.Errorf("validating webhook refused the rewritten object: %+v", v.Result)
			}

			// A pod its controller makes: template metadata and spec copied.
			if k.path != nil {
				pk := templateKinds[0]
				pod := pk.object(t, map[string]any{"metadata": map[string]any{"annotations": meta.Annotations}, "spec": spec})
				presp, pout := review(t, rev, true, pk, admissionv1.Create, pod, nil)
				if !presp.Allowed {
					t.Fatalf("pod from template refused: %+v", presp.Result)
				}
				if len(presp.Patch) != 0 {
					t.Errorf("pod from a rewritten template patched again: %s", presp.Patch)
				}
				pm, ps, _ := pk.template(t, pout)
				checkTemplate(t, "pod", pm, ps, dpcorev1.DNSCustom, want)
			}

			// kubectl apply of new parameters only: the stored rewritten
			// spec stays (its dnsPolicy and dnsConfig were not in the
			// applied manifest's diff), the annotation changes.
			var next map[string]any
			if err := json.Unmarshal(rewritten, &next); err != nil {
				t.Fatal(err)
			}
			cur := next
			for _, p := range k.path {
				cur = cur[p].(map[string]any)
			}
			cur["metadata"].(map[string]any)["annotations"].(map[string]any)[dnsparams.Annotation] =
				dnsparams.Encode(&dpcorev1.PodDNSParams{Custom: &dpcorev1.PodDNSParamsCustom{Search: []string{"new.example"}, Options: []string{"ndots:3"}}})
			updated, _ := json.Marshal(next)
			uresp, uout := review(t, rev, true, k, admissionv1.Update, updated, rewritten)
			if !uresp.Allowed || len(uresp.Patch) == 0 {
				t.Fatalf("params-only update: allowed=%v patch=%s result=%+v", uresp.Allowed, uresp.Patch, uresp.Result)
			}
			um, us, _ := k.template(t, uout)
			checkTemplate(t, "updated", um, us, dpcorev1.DNSCustom, resolvconf.Config{
				Nameservers: []string{"10.96.0.10", "1.1.1.1"},
				Searches:    []string{"new.example", "user.example"},
				Options:     []string{"ndots:3"},
			})
		})
	}
}

func checkTemplate(t *testing.T, stage string, meta metav1.ObjectMeta, spec corev1.PodSpec, policy corev1.DNSPolicy, want resolvconf.Config) {
	t.Helper()
	if spec.DNSPolicy != corev1.DNSNone {
		t.Errorf("%s: dnsPolicy %q, want None", stage, spec.DNSPolicy)
	}
	if meta.Annotations[PolicyAnnotation] != string(policy) {
		t.Errorf("%s: %s = %q, want %q", stage, PolicyAnnotation, meta.Annotations[PolicyAnnotation], policy)
	}
	if policy == dpcorev1.DNSCustom && meta.Annotations[ParamsAnnotation] == "" {
		t.Errorf("%s: %s dropped", stage, ParamsAnnotation)
	}
	if spec.DNSConfig == nil {
		t.Fatalf("%s: no dnsConfig", stage)
	}
	var opts []string
	for _, o := range spec.DNSConfig.Options {
		opts = append(opts, optionString(o))
	}
	got := resolvconf.Config{Nameservers: spec.DNSConfig.Nameservers, Searches: spec.DNSConfig.Searches, Options: opts}
	if !slices.Equal(got.Nameservers, want.Nameservers) || !slices.Equal(got.Searches, want.Searches) || !slices.Equal(got.Options, want.Options) {
		t.Errorf("%s: dnsConfig %+v, want %+v", stage, got, want)
	}
}

// TestRefusals: invalid parameters are refused by both webhooks with
// dnsplane's API server's field paths, as a 422 Invalid status.
func TestRefusals(t *testing.T) {
	t.Parallel()
	rev := NewReviewer(stock, nil)
	deploy := templateKinds[3]
	pod := templateKinds[0]
	for _, tc := range []struct {
		name      string
		k         templateKind
		tmpl      map[string]any
		wantCause []string // "field: detail substring"
	}{
		{"custom without annotation", pod, map[string]any{"metadata": map[string]any{}, "spec": map[string]any{"dnsPolicy": "Custom", "containers": []any{}}},
			[]string{"spec.dnsParams: " + ParamsAnnotation}},
		{"bad search entry", deploy, customTemplate([]string{"$(HOST)", "a.example"}, nil),
			[]string{"spec.template.spec.dnsParams.custom.search[0]"}},
		{"bad substitution", deploy, customTemplate([]string{"x$(NAMESPACE).example"}, nil),
			[]string{"spec.template.spec.dnsParams.custom.search[0]"}},
		{"unreadable annotation", deploy, map[string]any{
			"metadata": map[string]any{"annotations": map[string]any{ParamsAnnotation: `{"custom":{"searches":["a.com"]}}`}},
			"spec":     map[string]any{"dnsPolicy": "Custom", "containers": []any{}}},
			[]string{"spec.template.metadata.annotations[pod.dnsplane.io/dns-params]: must be a JSON object of spec.dnsParams", "spec.template.spec.dnsParams: " + ParamsAnnotation}},
		{"bad policy annotation", pod, map[string]any{
			"metadata": map[string]any{"annotations": map[string]any{PolicyAnnotation: "Sometimes"}},
			"spec":     map[string]any{"dnsPolicy": "None", "dnsConfig": map[string]any{"nameservers": []any{"1.1.1.1"}}, "containers": []any{}}},
			[]string{"metadata.annotations[pod.dnsplane.io/dns-policy]: supported values"}},
		{"too many nameservers", pod, customTemplate([]string{"a.example"}, &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1", "2.2.2.2", "3.3.3.3", "4.4.4.4"}}),
			[]string{"spec.dnsConfig.nameservers: must not have more than 3 nameservers"}},
	} {
		for _, mutate := range []bool{true, false} {
			t.Run(tc.name+map[bool]string{true: "/mutate", false: "/validate"}[mutate], func(t *testing.T) {
				t.Parallel()
				resp, _ := review(t, rev, mutate, tc.k, admissionv1.Create, tc.k.object(t, tc.tmpl), nil)
				if resp.Allowed || resp.Result == nil {
					t.Fatalf("allowed; want refused")
				}
				if resp.Result.Code != 422 || resp.Result.Reason != metav1.StatusReasonInvalid || resp.Result.Details == nil {
					t.Fatalf("status %d %s details %v, want 422 Invalid with causes", resp.Result.Code, resp.Result.Reason, resp.Result.Details)
				}
				var causes []string
				for _, c := range resp.Result.Details.Causes {
					causes = append(causes, c.Field+": "+c.Message)
				}
				for _, want := range tc.wantCause {
					field, detail, _ := strings.Cut(want, ": ")
					if !slices.ContainsFunc(causes, func(c string) bool {
						return strings.HasPrefix(c, field+": ") && strings.Contains(c, detail)
					}) {
						t.Errorf("no cause %q in %q (message %q)", want, causes, resp.Result.Message)
					}
				}
			})
		}
	}
}

// TestOrdinaryObjectsUntouched: what the match conditions let through by
// accident (or a stale annotation) is not rewritten.
func TestOrdinaryObjectsUntouched(t *testing.T) {
	t.Parallel()
	rev := NewReviewer(stock, nil)
	for _, k := range templateKinds {
		obj := k.object(t, map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "b"}},
			"spec": map[string]any{"dnsPolicy": "ClusterFirst", "containers": []any{}}})
		for _, mutate := range []bool{true, false} {
			resp, _ := review(t, rev, mutate, k, admissionv1.Create, obj, nil)
			if !resp.Allowed || len(resp.Patch) != 0 {
				t.Errorf("%s mutate=%v: allowed=%v patch=%s", k.kind, mutate, resp.Allowed, resp.Patch)
			}
		}
	}
}
