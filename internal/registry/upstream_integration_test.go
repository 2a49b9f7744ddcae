package registry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes"

	"github.com/dnsplane/dnsplane/api"
	dpappsv1 "github.com/dnsplane/dnsplane/api/apps/v1"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
)

// The tests below send, through the real API server, requests that
// kube-apiserver refuses and check that dnsplane answers what it answers: a
// 422 whose body is the Status (message, details, causes in order)
// apierrors.NewInvalid builds from upstream's field errors, encoded as
// kube-apiserver encodes it, with nothing written (no object of the kind
// in the namespace changes). Valid requests
// of each kind pass. The messages are upstream's validators' own, written
// out here so that a change in them, or a cause reported twice or in
// another order, fails.

// kindCase is one request and the causes of the 422 it gets; no causes
// means it succeeds.
type kindCase struct {
	name string
	// before, when set, is created first; obj then replaces it (an update,
	// or a /status write when status is set).
	before any
	obj    any
	status bool
	causes []metav1.StatusCause
}

// cause is one expected StatusCause.
func cause(typ metav1.CauseType, fieldPath, msg string) metav1.StatusCause {
	return metav1.StatusCause{Type: typ, Field: fieldPath, Message: msg}
}

const (
	required    = metav1.CauseTypeFieldValueRequired
	invalid     = metav1.CauseTypeFieldValueInvalid
	forbidden   = metav1.CauseTypeForbidden
	unsupported = metav1.CauseTypeFieldValueNotSupported
)

// invalidStatus is kube-apiserver's 422 for gk/name with causes: the
// message joins the causes as field.ErrorList.ToAggregate does (each
// distinct "field: message" once, in order; brackets around several).
func invalidStatus(gk schema.GroupKind, name string, causes []metav1.StatusCause) metav1.Status {
	var msgs []string
	seen := sets.New[string]()
	for _, c := range causes {
		m := c.Field + ": " + c.Message
		if !seen.Has(m) {
			seen.Insert(m)
			msgs = append(msgs, m)
		}
	}
	agg := strings.Join(msgs, "")
	if len(msgs) > 1 {
		agg = "[" + strings.Join(msgs, ", ") + "]"
	}
	return metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Message:  fmt.Sprintf("%s %q is invalid: %s", gk.String(), name, agg),
		Reason:   metav1.StatusReasonInvalid,
		Details:  &metav1.StatusDetails{Name: name, Group: gk.Group, Kind: gk.Kind, Causes: causes},
		Code:     http.StatusUnprocessableEntity,
	}
}

// kindTester sends a kind's cases to one server.
type kindTester struct {
	client kubernetes.Interface
	res    api.Resource
	ns     string // "" for cluster-scoped kinds
}

func (k kindTester) path(name string, status bool) string {
	p := "/api/v1"
	if k.res.GVK.Group != "" {
		p = "/apis/" + k.res.GVK.Group + "/" + k.res.GVK.Version
	}
	if k.ns != "" {
		p += "/namespaces/" + k.ns
	}
	p += "/" + k.res.Plural
	if name != "" {
		p += "/" + name
	}
	if status {
		p += "/status"
	}
	return p
}

// send POSTs obj (name "" ) or PUTs it to name, and returns the status
// code and body.
func (k kindTester) send(t *testing.T, method, path string, obj any) (int, []byte) {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var code int
	body, err := k.client.CoreV1().RESTClient().Verb(method).AbsPath(path).
		SetHeader("Content-Type", "application/json").Body(data).Do(context.Background()).StatusCode(&code).Raw()
	if err != nil && !apierrors.IsInvalid(err) {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return code, body
}

// revision is the resourceVersion of every object of the kind in the
// tester's namespace: a refused request must leave it as it was. (Not the
// etcd revision: the API server's own controllers write beside the test,
// the kubernetes Service's endpoint leases every 10 s.)
func (k kindTester) revision(t *testing.T) string {
	t.Helper()
	body, err := k.client.CoreV1().RESTClient().Get().AbsPath(k.path("", false)).Do(context.Background()).Raw()
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Items []metav1.PartialObjectMetadata `json:"items"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, it := range list.Items {
		fmt.Fprintf(&b, "%s=%s ", it.Name, it.ResourceVersion)
	}
	return b.String()
}

func nameOf(obj any) string {
	v := reflect.ValueOf(obj).Elem().FieldByName("ObjectMeta").Interface().(metav1.ObjectMeta)
	return v.Name
}

func (k kindTester) run(t *testing.T, cases []kindCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := nameOf(tc.obj)
			method, path := http.MethodPost, k.path("", false)
			if tc.before != nil {
				if code, body := k.send(t, http.MethodPost, k.path("", false), tc.before); code != http.StatusCreated {
					t.Fatalf("creating the object to update: %d %s", code, body)
				}
				method, path = http.MethodPut, k.path(name, tc.status)
			}
			rev := k.revision(t)
			code, body := k.send(t, method, path, tc.obj)
			if tc.causes == nil {
				if code != http.StatusCreated && code != http.StatusOK {
					t.Fatalf("%s %s: %d %s, want success", method, path, code, body)
				}
				return
			}
			var got metav1.Status
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("%s %s: %d, body %s: %v", method, path, code, body, err)
			}
			want := invalidStatus(k.res.GVK.GroupKind(), name, tc.causes)
			if code != http.StatusUnprocessableEntity || !reflect.DeepEqual(got, want) {
				g, _ := json.MarshalIndent(got, "", "  ")
				w, _ := json.MarshalIndent(want, "", "  ")
				t.Errorf("%s %s: %d\n%s\nwant 422\n%s", method, path, code, g, w)
			} else if wantBody, _ := json.Marshal(want); !bytes.Equal(bytes.TrimSuffix(body, []byte("\n")), wantBody) {
				// The same fields in the same order, nothing else.
				t.Errorf("%s %s: body\n%s\nwant\n%s", method, path, body, wantBody)
			}
			if after := k.revision(t); after != rev {
				t.Errorf("the refused request wrote: objects %s, were %s", after, rev)
			}
		})
	}
}

// TestUpstreamValidation runs each kind's cases against one server.
func TestUpstreamValidation(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	ts := controlplanetest.StartTestServer(t, controlplane.Config{})
	for _, tt := range []struct {
		gvk   schema.GroupVersionKind
		cases func(ns string) []kindCase
	}{
		{corev1.SchemeGroupVersion.WithKind("Pod"), podCases},
		{corev1.SchemeGroupVersion.WithKind("PodTemplate"), podTemplateCases},
		{corev1.SchemeGroupVersion.WithKind("ReplicationController"), replicationControllerCases},
		{appsv1.SchemeGroupVersion.WithKind("Deployment"), deploymentCases},
		{appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), replicaSetCases},
		{appsv1.SchemeGroupVersion.WithKind("StatefulSet"), statefulSetCases},
		{appsv1.SchemeGroupVersion.WithKind("DaemonSet"), daemonSetCases},
		{batchv1.SchemeGroupVersion.WithKind("Job"), jobCases},
		{batchv1.SchemeGroupVersion.WithKind("CronJob"), cronJobCases},
		{corev1.SchemeGroupVersion.WithKind("Namespace"), namespaceCases},
		{corev1.SchemeGroupVersion.WithKind("Service"), serviceCases},
		{corev1.SchemeGroupVersion.WithKind("Endpoints"), endpointsCases},
		{corev1.SchemeGroupVersion.WithKind("ConfigMap"), configMapCases},
		{corev1.SchemeGroupVersion.WithKind("Secret"), secretCases},
		{corev1.SchemeGroupVersion.WithKind("Node"), nodeCases},
		{corev1.SchemeGroupVersion.WithKind("Event"), eventCases},
		{corev1.SchemeGroupVersion.WithKind("ServiceAccount"), serviceAccountCases},
		{discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice"), endpointSliceCases},
		{coordinationv1.SchemeGroupVersion.WithKind("Lease"), leaseCases},
	} {
		t.Run(tt.gvk.Kind, func(t *testing.T) { runKindCases(t, ts.Client, tt.gvk, tt.cases) })
	}
	t.Run("defaults", func(t *testing.T) { checkDefaults(t, ts.Client) })
}

// checkDefaults reads back objects the cases created and checks what
// upstream's defaulting (and the parts of its strategies dnsplane applies)
// set on them.
func checkDefaults(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	ns, err := c.CoreV1().Namespaces().Get(ctx, "team-a", metav1.GetOptions{})
	if err != nil || ns.Labels[corev1.LabelMetadataName] != "team-a" || ns.Status.Phase != corev1.NamespaceActive {
		t.Errorf("namespace: %v %+v", err, ns)
	}
	p, err := c.CoreV1().Pods("pod").Get(ctx, "valid", metav1.GetOptions{})
	if err != nil || p.Spec.EnableServiceLinks == nil || !*p.Spec.EnableServiceLinks || p.Spec.SchedulerName != corev1.DefaultSchedulerName ||
		p.Spec.Containers[0].ImagePullPolicy != corev1.PullIfNotPresent || p.Status.QOSClass != corev1.PodQOSBestEffort || p.Status.Phase != corev1.PodPending {
		t.Errorf("pod: %v %+v", err, p)
	}
	raw, err := c.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces/pod/pods/custom").DoRaw(ctx)
	var custom dpcorev1.Pod
	if err == nil {
		err = json.Unmarshal(raw, &custom)
	}
	if err != nil || custom.Spec.DNSParams == nil || custom.Spec.DNSParams.Custom.Search[0] != "$(NAMESPACE).svc.$(CLUSTER)" || custom.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		t.Errorf("Custom pod: %v, dnsParams %+v, restartPolicy %q", err, custom.Spec.DNSParams, custom.Spec.RestartPolicy)
	}
	j, err := c.BatchV1().Jobs("job").Get(ctx, "valid", metav1.GetOptions{})
	if err != nil || j.Spec.Selector == nil || j.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel] != string(j.UID) ||
		j.Spec.Template.Labels[batchv1.JobNameLabel] != "valid" || *j.Spec.BackoffLimit != 6 {
		t.Errorf("job: %v %+v", err, j)
	}
	d, err := c.AppsV1().Deployments("deployment").Get(ctx, "valid", metav1.GetOptions{})
	if err != nil || d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || d.Spec.RevisionHistoryLimit == nil || *d.Spec.ProgressDeadlineSeconds != 600 {
		t.Errorf("deployment: %v %+v", err, d)
	}
	svc, err := c.CoreV1().Services("service").Get(ctx, "fixed", metav1.GetOptions{})
	if err != nil || svc.Spec.Type != corev1.ServiceTypeClusterIP || svc.Spec.SessionAffinity != corev1.ServiceAffinityNone ||
		len(svc.Spec.ClusterIPs) != 1 || svc.Spec.ClusterIPs[0] != "10.96.0.50" || svc.Spec.Ports[0].TargetPort.IntValue() != 80 {
		t.Errorf("service: %v %+v", err, svc)
	}
}

// Objects: valid ones, which each case breaks in one way.

func meta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }

func podSpec() corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}}
}

func pod(name string, mutate ...func(*dpcorev1.Pod)) *dpcorev1.Pod {
	p := &dpcorev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: meta(name),
		Spec: dpcorev1.PodSpec{PodSpec: podSpec()}}
	// ServiceAccount admission names the default account on create; an
	// update that sent no name would change it, which pod updates may not
	// (in kube-apiserver too). Clients send back what they read.
	p.Spec.ServiceAccountName = "default"
	for _, m := range mutate {
		m(p)
	}
	return p
}

func template(labels map[string]string) dpcorev1.PodTemplateSpec {
	return dpcorev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: dpcorev1.PodSpec{PodSpec: podSpec()}}
}

var app = map[string]string{"app": "web"}

func podCases(string) []kindCase {
	return []kindCase{
		{name: "valid", obj: pod("valid")},
		{name: "no containers", obj: pod("no-containers", func(p *dpcorev1.Pod) { p.Spec.Containers = nil }),
			causes: []metav1.StatusCause{cause(required, "spec.containers", "Required value")}},
		{name: "container name not a DNS label", obj: pod("bad-container", func(p *dpcorev1.Pod) { p.Spec.Containers[0].Name = "C_1" }),
			causes: []metav1.StatusCause{cause(invalid, "spec.containers[0].name",
				`Invalid value: "C_1": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`)}},
		// An invalid label is reported once on create: upstream's validator
		// checks the metadata, the generic checks run only after it passed.
		{name: "invalid label", obj: pod("bad-label", func(p *dpcorev1.Pod) { p.Labels = map[string]string{"a": "-x"} }),
			causes: []metav1.StatusCause{labelCause}},
		// dnsplane's policies pass; upstream's error for them is dropped.
		{name: "dnsPolicy Custom", obj: pod("custom", func(p *dpcorev1.Pod) {
			p.Spec.DNSPolicy = dpcorev1.DNSCustom
			p.Spec.DNSParams = &dpcorev1.PodDNSParams{Custom: &dpcorev1.PodDNSParamsCustom{Search: []string{"$(NAMESPACE).svc.$(CLUSTER)"}}}
		})},
		{name: "dnsPolicy ClusterFirstWithAutopath", obj: pod("autopath", func(p *dpcorev1.Pod) { p.Spec.DNSPolicy = dpcorev1.DNSClusterFirstWithAutopath })},
		// An unknown policy: dnsplane's error, which lists its policies,
		// in place of upstream's.
		{name: "unknown dnsPolicy", obj: pod("bad-policy", func(p *dpcorev1.Pod) { p.Spec.DNSPolicy = "Sometimes" }),
			causes: []metav1.StatusCause{cause(unsupported, "spec.dnsPolicy",
				`Unsupported value: "Sometimes": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None", "Custom", "ClusterFirstWithAutopath"`)}},
		// Upstream and dnsplane both require dnsConfig with None: once.
		{name: "None without dnsConfig", obj: pod("none", func(p *dpcorev1.Pod) { p.Spec.DNSPolicy = corev1.DNSNone }),
			causes: []metav1.StatusCause{cause(required, "spec.dnsConfig", "Required value: must provide `dnsConfig` when `dnsPolicy` is None")}},
		// KEP-4427's relaxed searches are dnsplane's with the gate on.
		{name: "relaxed search", obj: pod("relaxed", func(p *dpcorev1.Pod) {
			p.Spec.DNSConfig = &corev1.PodDNSConfig{Searches: []string{"_sip._tcp.abc_d.example.com", "."}}
		})},
		{name: "update changes dnsPolicy", before: pod("upd-policy"),
			obj: pod("upd-policy", func(p *dpcorev1.Pod) { p.Spec.DNSPolicy = corev1.DNSDefault }),
			causes: []metav1.StatusCause{cause(forbidden, "spec", podUpdateForbidden+
				"@@ -38,7 +38,7 @@\n  \"RestartPolicy\": \"Always\",\n  \"TerminationGracePeriodSeconds\": 30,\n  \"ActiveDeadlineSeconds\": null,\n- \"DNSPolicy\": \"ClusterFirst\",\n+ \"DNSPolicy\": \"Default\",\n  \"NodeSelector\": null,\n  \"ServiceAccountName\": \"default\",\n  \"DeprecatedServiceAccount\": \"default\",\n")}},
		{name: "update changes dnsParams", before: pod("upd-params", func(p *dpcorev1.Pod) {
			p.Spec.DNSPolicy = dpcorev1.DNSCustom
			p.Spec.DNSParams = &dpcorev1.PodDNSParams{Custom: &dpcorev1.PodDNSParamsCustom{Search: []string{"a.example.com"}}}
		}), obj: pod("upd-params", func(p *dpcorev1.Pod) {
			p.Spec.DNSPolicy = dpcorev1.DNSCustom
			p.Spec.DNSParams = &dpcorev1.PodDNSParams{Custom: &dpcorev1.PodDNSParamsCustom{Search: []string{"b.example.com"}}}
		}), causes: []metav1.StatusCause{cause(forbidden, "spec.dnsParams", "Forbidden: pod updates may not change spec.dnsParams")}},
		// On update the metadata is checked by the generic rules and again
		// (twice for annotations) by ValidatePodUpdate; the merge with
		// declarative validation drops repeated errors, so each is reported
		// once, as by kube-apiserver.
		{name: "update with an invalid label", before: pod("upd-label"),
			obj:    pod("upd-label", func(p *dpcorev1.Pod) { p.Labels = map[string]string{"a": "-x"} }),
			causes: []metav1.StatusCause{labelCause}},
		{name: "update with an invalid annotation", before: pod("upd-annotation"),
			obj: pod("upd-annotation", func(p *dpcorev1.Pod) { p.Annotations = map[string]string{"-x": "1"} }),
			causes: []metav1.StatusCause{cause(invalid, "metadata.annotations",
				`Invalid value: "-x": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`)}},
		{name: "update changes the image", before: pod("upd-image"),
			obj: pod("upd-image", func(p *dpcorev1.Pod) { p.Spec.Containers[0].Image = "nginx:1.28" })},
		{name: "status podIP", before: pod("status-ip"), status: true,
			obj: pod("status-ip", func(p *dpcorev1.Pod) { p.Status.PodIP = "10.244.1.999" }),
			causes: []metav1.StatusCause{cause(invalid, "status.podIPs[0]",
				`Invalid value: "10.244.1.999": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`)}},
		{name: "status podIP valid", before: pod("status-ok"), status: true,
			obj: pod("status-ok", func(p *dpcorev1.Pod) { p.Status.PodIP, p.Status.Phase = "10.244.1.9", corev1.PodRunning })},
	}
}

var labelCause = cause(invalid, "metadata.labels",
	`Invalid value: "-x": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`)

// podUpdateForbidden is the start of upstream's message for a pod update
// that changes more than it may; the spec diff follows.
const podUpdateForbidden = "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n"

func podTemplateCases(string) []kindCase {
	pt := func(name string, spec dpcorev1.PodSpec) *dpcorev1.PodTemplate {
		return &dpcorev1.PodTemplate{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodTemplate"}, ObjectMeta: meta(name),
			Template: dpcorev1.PodTemplateSpec{Spec: spec}}
	}
	return []kindCase{
		{name: "valid", obj: pt("valid", dpcorev1.PodSpec{PodSpec: podSpec()})},
		{name: "no containers", obj: pt("empty", dpcorev1.PodSpec{}),
			causes: []metav1.StatusCause{cause(required, "template.spec.containers", "Required value")}},
		// A template may change, and its searches ratchet (docs/pod-dns.md).
		{name: "update dnsConfig", before: pt("upd", dpcorev1.PodSpec{PodSpec: podSpec()}),
			obj: pt("upd", dpcorev1.PodSpec{PodSpec: func() corev1.PodSpec {
				s := podSpec()
				s.DNSConfig = &corev1.PodDNSConfig{Options: []corev1.PodDNSConfigOption{{Name: ""}}}
				return s
			}()}),
			causes: []metav1.StatusCause{cause(required, "template.spec.dnsConfig.options[0]", "Required value: must not be empty")}},
	}
}

func replicationControllerCases(string) []kindCase {
	rc := func(name string, selector map[string]string) *dpcorev1.ReplicationController {
		t := template(app)
		r := &dpcorev1.ReplicationController{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ReplicationController"}, ObjectMeta: meta(name)}
		r.Spec.Selector, r.Spec.Template = selector, &t
		return r
	}
	return []kindCase{
		{name: "valid", obj: rc("valid", app)},
		{name: "selector does not match the template", obj: rc("mismatch", map[string]string{"app": "db"}),
			causes: []metav1.StatusCause{cause(invalid, "spec.template.metadata.labels",
				`Invalid value: {"app":"web"}: `+"`selector` does not match template `labels`")}},
	}
}

func deployment(name string, selector map[string]string, mutate ...func(*dpappsv1.Deployment)) *dpappsv1.Deployment {
	d := &dpappsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: meta(name)}
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: selector}
	d.Spec.Template = template(app)
	for _, m := range mutate {
		m(d)
	}
	return d
}

func deploymentCases(string) []kindCase {
	return []kindCase{
		{name: "valid", obj: deployment("valid", app)},
		{name: "selector does not match the template", obj: deployment("mismatch", map[string]string{"app": "db"}),
			causes: []metav1.StatusCause{cause(invalid, "spec.template.metadata.labels",
				`Invalid value: {"app":"web"}: `+"`selector` does not match template `labels`")}},
		{name: "negative replicas", obj: deployment("negative", app, func(d *dpappsv1.Deployment) { d.Spec.Replicas = ptr(int32(-1)) }),
			causes: []metav1.StatusCause{cause(invalid, "spec.replicas", "Invalid value: -1: must be greater than or equal to 0")}},
		// The template's DNS rules are dnsplane's.
		{name: "template dnsPolicy Custom without dnsParams", obj: deployment("custom", app, func(d *dpappsv1.Deployment) {
			d.Spec.Template.Spec.DNSPolicy = dpcorev1.DNSCustom
		}), causes: []metav1.StatusCause{cause(required, "spec.template.spec.dnsParams", "Required value: must be set when `dnsPolicy` is Custom")}},
		{name: "selector changed", before: deployment("immutable", app),
			obj: deployment("immutable", map[string]string{"app": "web", "tier": "x"}, func(d *dpappsv1.Deployment) {
				d.Spec.Template.Labels = map[string]string{"app": "web", "tier": "x"}
			}),
			causes: []metav1.StatusCause{cause(invalid, "spec.selector",
				`Invalid value: {"matchLabels":{"app":"web","tier":"x"}}: field is immutable`)}},
		{name: "status negative replicas", before: deployment("status", app), status: true,
			obj: deployment("status", app, func(d *dpappsv1.Deployment) { d.Status.Replicas = -1 }),
			causes: []metav1.StatusCause{
				cause(invalid, "status.replicas", "Invalid value: -1: must be greater than or equal to 0"),
				cause(invalid, "status.updatedReplicas", "Invalid value: 0: cannot be greater than status.replicas"),
				cause(invalid, "status.readyReplicas", "Invalid value: 0: cannot be greater than status.replicas"),
				cause(invalid, "status.availableReplicas", "Invalid value: 0: cannot be greater than status.replicas"),
			}},
	}
}

func replicaSetCases(string) []kindCase {
	rs := func(name string, selector map[string]string) *dpappsv1.ReplicaSet {
		r := &dpappsv1.ReplicaSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"}, ObjectMeta: meta(name)}
		r.Spec.Selector = &metav1.LabelSelector{MatchLabels: selector}
		r.Spec.Template = template(app)
		return r
	}
	return []kindCase{
		{name: "valid", obj: rs("valid", app)},
		{name: "selector does not match the template", obj: rs("mismatch", map[string]string{"app": "db"}),
			causes: []metav1.StatusCause{cause(invalid, "spec.template.metadata.labels",
				`Invalid value: {"app":"web"}: `+"`selector` does not match template `labels`")}},
	}
}

func statefulSetCases(string) []kindCase {
	ss := func(name string, mutate func(*dpappsv1.StatefulSet)) *dpappsv1.StatefulSet {
		s := &dpappsv1.StatefulSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"}, ObjectMeta: meta(name)}
		s.Spec.Selector = &metav1.LabelSelector{MatchLabels: app}
		s.Spec.Template = template(app)
		s.Spec.ServiceName = "web"
		if mutate != nil {
			mutate(s)
		}
		return s
	}
	return []kindCase{
		{name: "valid", obj: ss("valid", nil)},
		{name: "invalid podManagementPolicy", obj: ss("policy", func(s *dpappsv1.StatefulSet) { s.Spec.PodManagementPolicy = "Sometimes" }),
			causes: []metav1.StatusCause{cause(invalid, "spec.podManagementPolicy", `Invalid value: "Sometimes": must be 'OrderedReady' or 'Parallel'`)}},
	}
}

func daemonSetCases(string) []kindCase {
	ds := func(name string, restart corev1.RestartPolicy) *dpappsv1.DaemonSet {
		d := &dpappsv1.DaemonSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"}, ObjectMeta: meta(name)}
		d.Spec.Selector = &metav1.LabelSelector{MatchLabels: app}
		d.Spec.Template = template(app)
		d.Spec.Template.Spec.RestartPolicy = restart
		return d
	}
	return []kindCase{
		{name: "valid", obj: ds("valid", "")},
		{name: "restartPolicy Never", obj: ds("never", corev1.RestartPolicyNever),
			causes: []metav1.StatusCause{cause(unsupported, "spec.template.spec.restartPolicy", `Unsupported value: "Never": supported values: "Always"`)}},
	}
}

func jobCases(string) []kindCase {
	job := func(name string, mutate func(*batchv1.Job)) *batchv1.Job {
		j := &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}, ObjectMeta: meta(name)}
		j.Spec.Template.Spec = podSpec()
		j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
		if mutate != nil {
			mutate(j)
		}
		return j
	}
	return []kindCase{
		// The server generates the selector and the template's labels.
		{name: "valid", obj: job("valid", nil)},
		{name: "restartPolicy Always", obj: job("always", func(j *batchv1.Job) { j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways }),
			causes: []metav1.StatusCause{cause(required, "spec.template.spec.restartPolicy", `Required value: valid values: "OnFailure", "Never"`)}},
		{name: "negative parallelism", obj: job("parallel", func(j *batchv1.Job) { j.Spec.Parallelism = ptr(int32(-1)) }),
			causes: []metav1.StatusCause{cause(invalid, "spec.parallelism", "Invalid value: -1: must be greater than or equal to 0")}},
	}
}

func cronJobCases(string) []kindCase {
	cj := func(name, schedule string) *batchv1.CronJob {
		c := &batchv1.CronJob{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "CronJob"}, ObjectMeta: meta(name)}
		c.Spec.Schedule = schedule
		c.Spec.JobTemplate.Spec.Template.Spec = podSpec()
		c.Spec.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		return c
	}
	return []kindCase{
		{name: "valid", obj: cj("valid", "0 0 * * *")},
		{name: "invalid schedule", obj: cj("bad-schedule", "every day"),
			causes: []metav1.StatusCause{cause(invalid, "spec.schedule", `Invalid value: "every day": expected exactly 5 fields, found 2: [every day]`)}},
	}
}

func namespaceCases(string) []kindCase {
	ns := func(name string) *corev1.Namespace {
		return &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: meta(name)}
	}
	return []kindCase{
		{name: "valid", obj: ns("team-a")},
		{name: "name not a DNS label", obj: ns("team.a"),
			causes: []metav1.StatusCause{cause(invalid, "metadata.name", `Invalid value: "team.a": must not contain dots`)}},
		{name: "status phase", before: ns("team-b"), status: true,
			obj: &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: meta("team-b"),
				Status: corev1.NamespaceStatus{Phase: "Gone"}},
			causes: []metav1.StatusCause{cause(invalid, "status.Phase", "Invalid value: \"Gone\": may only be 'Active' if `deletionTimestamp` is empty")}},
	}
}

func serviceCases(string) []kindCase {
	svc := func(name string, mutate func(*corev1.Service)) *corev1.Service {
		s := &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: meta(name),
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
		if mutate != nil {
			mutate(s)
		}
		return s
	}
	return []kindCase{
		{name: "valid", obj: svc("valid", nil)},
		{name: "fixed cluster IP", obj: svc("fixed", func(s *corev1.Service) { s.Spec.ClusterIP = "10.96.0.50" })},
		{name: "headless without ports", obj: svc("headless", func(s *corev1.Service) {
			s.Spec.ClusterIP, s.Spec.Ports = corev1.ClusterIPNone, nil
			s.Spec.Selector = app
		})},
		{name: "unknown type", obj: svc("magic", func(s *corev1.Service) { s.Spec.Type = "Magic" }),
			causes: []metav1.StatusCause{cause(unsupported, "spec.type",
				`Unsupported value: "Magic": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"`)}},
		{name: "cluster IP not an address", obj: svc("bad-ip", func(s *corev1.Service) { s.Spec.ClusterIP = "10.96.0.999" }),
			causes: []metav1.StatusCause{cause(invalid, "spec.clusterIPs[0]",
				`Invalid value: "10.96.0.999": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`)}},
		{name: "duplicate port", obj: svc("dup", func(s *corev1.Service) {
			s.Spec.Ports = []corev1.ServicePort{{Name: "a", Port: 80}, {Name: "b", Port: 80}}
		}), causes: []metav1.StatusCause{cause(metav1.CauseTypeFieldValueDuplicate, "spec.ports[1]", `Duplicate value: {"Name":"","Protocol":"TCP","AppProtocol":null,"Port":80,"TargetPort":0,"NodePort":0}`)}},
	}
}

func endpointsCases(string) []kindCase {
	//nolint:staticcheck // SA1019: kube-apiserver still serves Endpoints, and so does dnsplane
	ep := func(name, ip string) *corev1.Endpoints {
		//nolint:staticcheck // SA1019: as above
		return &corev1.Endpoints{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Endpoints"}, ObjectMeta: meta(name),
			Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: ip}}, Ports: []corev1.EndpointPort{{Port: 80}}}}} //nolint:staticcheck // SA1019: as above
	}
	return []kindCase{
		{name: "valid", obj: ep("valid", "10.244.1.5")},
		{name: "address not an IP", obj: ep("bad-ip", "not-an-ip"),
			// Upstream checks the address twice (IsValidIPForLegacyField, then
			// ValidateEndpointIP), with two messages.
			causes: []metav1.StatusCause{
				cause(invalid, "subsets[0].addresses[0].ip", `Invalid value: "not-an-ip": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`),
				cause(invalid, "subsets[0].addresses[0].ip", `Invalid value: "not-an-ip": must be a valid IP address`),
			}},
	}
}

func configMapCases(string) []kindCase {
	cm := func(name string, data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: meta(name), Data: data}
	}
	return []kindCase{
		{name: "valid", obj: cm("valid", map[string]string{"a.conf": "x"})},
		{name: "key with a space", obj: cm("bad-key", map[string]string{"a b": "x"}),
			causes: []metav1.StatusCause{cause(invalid, "data[a b]",
				`Invalid value: "a b": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`)}},
	}
}

func secretCases(string) []kindCase {
	sec := func(name string, typ corev1.SecretType, data map[string][]byte) *corev1.Secret {
		return &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: meta(name), Type: typ, Data: data}
	}
	return []kindCase{
		{name: "valid", obj: sec("valid", "", map[string][]byte{"k": []byte("v")})},
		{name: "tls without its keys", obj: sec("tls", corev1.SecretTypeTLS, nil),
			causes: []metav1.StatusCause{cause(required, "data[tls.crt]", "Required value"), cause(required, "data[tls.key]", "Required value")}},
		{name: "type changed", before: sec("typed", "", nil), obj: sec("typed", corev1.SecretTypeBasicAuth, nil),
			causes: []metav1.StatusCause{
				cause(invalid, "type", `Invalid value: "kubernetes.io/basic-auth": field is immutable`),
				cause(required, "data[username]", "Required value"),
				cause(required, "data[password]", "Required value"),
			}},
	}
}

func nodeCases(string) []kindCase {
	node := func(name, cidr string) *corev1.Node {
		return &corev1.Node{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"}, ObjectMeta: meta(name), Spec: corev1.NodeSpec{PodCIDR: cidr}}
	}
	return []kindCase{
		{name: "valid", obj: node("node-1", "10.244.1.0/24")},
		{name: "podCIDR /33", obj: node("node-2", "10.244.2.0/33"),
			causes: []metav1.StatusCause{cause(invalid, "spec.podCIDRs[0]",
				`Invalid value: "10.244.2.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)`)}},
	}
}

func eventCases(ns string) []kindCase {
	ev := func(name, involvedNamespace string) *corev1.Event {
		return &corev1.Event{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Event"}, ObjectMeta: meta(name),
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p", Namespace: involvedNamespace}, Reason: "Test"}
	}
	return []kindCase{
		{name: "valid", obj: ev("valid", ns)},
		{name: "involvedObject in another namespace", obj: ev("elsewhere", "other"),
			causes: []metav1.StatusCause{cause(invalid, "involvedObject.namespace", `Invalid value: "other": does not match event.namespace`)}},
	}
}

func serviceAccountCases(string) []kindCase {
	sa := func(name string) *corev1.ServiceAccount {
		return &corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: meta(name)}
	}
	return []kindCase{
		{name: "valid", obj: sa("builder")},
		{name: "name not a DNS subdomain", obj: sa("Builder"),
			causes: []metav1.StatusCause{cause(invalid, "metadata.name",
				`Invalid value: "Builder": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`)}},
	}
}

func endpointSliceCases(string) []kindCase {
	slice := func(name, addr string) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{TypeMeta: metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"}, ObjectMeta: meta(name),
			AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{addr}}}}
	}
	return []kindCase{
		{name: "valid", obj: slice("valid", "10.244.1.5")},
		{name: "IPv6 address in an IPv4 slice", obj: slice("v6", "fd00::5"),
			causes: []metav1.StatusCause{cause(invalid, "endpoints[0].addresses", `Invalid value: "fd00::5": must be an IPv4 address`)}},
	}
}

func leaseCases(string) []kindCase {
	lease := func(name string, seconds int32) *coordinationv1.Lease {
		return &coordinationv1.Lease{TypeMeta: metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"}, ObjectMeta: meta(name),
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr("me"), LeaseDurationSeconds: ptr(seconds)}}
	}
	return []kindCase{
		{name: "valid", obj: lease("valid", 15)},
		{name: "negative duration", obj: lease("negative", -1),
			causes: []metav1.StatusCause{cause(invalid, "spec.leaseDurationSeconds", "Invalid value: -1: must be greater than 0")}},
	}
}

func ptr[T any](v T) *T { return &v }

// runKindCases runs a kind's cases through the server: in a namespace named
// after the kind when it is namespaced.
func runKindCases(t *testing.T, c kubernetes.Interface, gvk schema.GroupVersionKind, cases func(ns string) []kindCase) {
	t.Helper()
	res, ok := api.Lookup(gvk)
	if !ok {
		t.Fatalf("%s is not served", gvk)
	}
	k := kindTester{client: c, res: res}
	if res.Namespaced {
		k.ns = strings.ToLower(gvk.Kind)
		if _, err := c.CoreV1().Namespaces().Create(context.Background(),
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: k.ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	k.run(t, cases(k.ns))
}
