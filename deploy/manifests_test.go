package deploy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiext "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/kubernetes/pkg/apis/admissionregistration"
	admissionvalidation "k8s.io/kubernetes/pkg/apis/admissionregistration/validation"
	"sigs.k8s.io/yaml"

	"github.com/dnsplane/dnsplane/internal/imagebuild"
	"github.com/dnsplane/dnsplane/internal/offlinevalidate"
	"github.com/dnsplane/dnsplane/internal/operator"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// documents splits a multi-document YAML stream into its non-empty
// documents.
func documents(t *testing.T, data []byte) [][]byte {
	t.Helper()
	var docs [][]byte
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		d, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatal(err)
		}
		var probe map[string]any
		if err := yaml.Unmarshal(d, &probe); err != nil {
			t.Fatal(err)
		}
		if len(probe) > 0 {
			docs = append(docs, d)
		}
	}
}

// objectsOf indexes the documents by "Kind/namespace/name".
func objectsOf(t *testing.T, data []byte) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, d := range documents(t, data) {
		var m struct {
			Kind     string
			Metadata struct{ Name, Namespace string }
		}
		if err := yaml.Unmarshal(d, &m); err != nil {
			t.Fatal(err)
		}
		key := m.Kind + "/" + m.Metadata.Namespace + "/" + m.Metadata.Name
		if _, dup := out[key]; dup {
			t.Errorf("%s rendered twice", key)
		}
		out[key] = d
	}
	return out
}

func decodeStrict[T any](t *testing.T, objs map[string][]byte, key string) *T {
	t.Helper()
	d, ok := objs[key]
	if !ok {
		t.Fatalf("no %s rendered (have %v)", key, keys(objs))
	}
	v := new(T)
	if err := yaml.UnmarshalStrict(d, v); err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return v
}

func keys(m map[string][]byte) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// TestManifestsValid validates every object of deploy/manifests/dnsplane.yaml
// with the API server's own code: the kinds dnsplane's API server serves
// through `dnsplane validate`'s engine (strict decoding, upstream
// defaulting and validation), the webhook configurations with
// kube-apiserver's admissionregistration validation (which compiles the
// CEL match conditions), and the CRD with apiextensions-apiserver's.
func TestManifestsValid(t *testing.T) {
	t.Parallel()
	srcs, err := offlinevalidate.Sources([]string{manifestsFile}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	var skipped []string
	for _, o := range (offlinevalidate.Validator{}).ValidateSource(t.Context(), srcs[0]) {
		switch o.Status {
		case offlinevalidate.Invalid:
			for _, f := range o.Findings {
				t.Errorf("%s %s: %s", o.Kind, o.Name, f)
			}
		case offlinevalidate.Skipped:
			skipped = append(skipped, o.Kind)
		}
	}
	slices.Sort(skipped)
	if want := []string{"CustomResourceDefinition", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}; !slices.Equal(skipped, want) {
		t.Errorf("kinds dnsplane's validation skipped: %v, want %v (each needs a check below)", skipped, want)
	}

	data, err := os.ReadFile(manifestsFile)
	if err != nil {
		t.Fatal(err)
	}
	objs := objectsOf(t, data)

	mwc := decodeStrict[admissionregistrationv1.MutatingWebhookConfiguration](t, objs, "MutatingWebhookConfiguration//dnsplane")
	upstream.Default(mwc)
	var imwc admissionregistration.MutatingWebhookConfiguration
	if err := upstream.Convert(mwc, &imwc); err != nil {
		t.Fatal(err)
	}
	if errs := admissionvalidation.ValidateMutatingWebhookConfiguration(&imwc); len(errs) > 0 {
		t.Errorf("MutatingWebhookConfiguration: %v", errs.ToAggregate())
	}
	vwc := decodeStrict[admissionregistrationv1.ValidatingWebhookConfiguration](t, objs, "ValidatingWebhookConfiguration//dnsplane")
	upstream.Default(vwc)
	var ivwc admissionregistration.ValidatingWebhookConfiguration
	if err := upstream.Convert(vwc, &ivwc); err != nil {
		t.Fatal(err)
	}
	if errs := admissionvalidation.ValidateValidatingWebhookConfiguration(&ivwc); len(errs) > 0 {
		t.Errorf("ValidatingWebhookConfiguration: %v", errs.ToAggregate())
	}

	v1crd := decodeStrict[apiextv1.CustomResourceDefinition](t, objs, "CustomResourceDefinition//dnses.operator.dnsplane.io")
	scheme := runtime.NewScheme()
	apiextinstall.Install(scheme)
	scheme.Default(v1crd)
	var crd apiext.CustomResourceDefinition
	if err := scheme.Convert(v1crd, &crd, nil); err != nil {
		t.Fatal(err)
	}
	crd.Status.StoredVersions = []string{"v1"}
	if errs := apiextvalidation.ValidateCustomResourceDefinition(context.Background(), &crd); len(errs) > 0 {
		t.Errorf("CustomResourceDefinition: %v", errs.ToAggregate())
	}
}

// TestWebhookConfigurationsPerContract: the two configurations are issue
// 30's contract, match conditions included, with no caBundle (the webhook
// injects it).
func TestWebhookConfigurationsPerContract(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(manifestsFile)
	if err != nil {
		t.Fatal(err)
	}
	objs := objectsOf(t, data)
	type hook struct {
		name, path, failurePolicy, sideEffects string
		versions                               []string
		timeout                                int32
		rules                                  []string
		conditions                             []string
		caBundle                               int
	}
	rulesOf := func(rs []admissionregistrationv1.RuleWithOperations) []string {
		var out []string
		for _, r := range rs {
			out = append(out, fmt.Sprintf("%v %v %v %v %s", r.Operations, r.APIGroups, r.APIVersions, r.Resources, *r.Scope))
		}
		return out
	}
	conds := func(mcs []admissionregistrationv1.MatchCondition) []string {
		var out []string
		for _, c := range mcs {
			out = append(out, c.Name+": "+c.Expression)
		}
		return out
	}
	svc := func(c admissionregistrationv1.WebhookClientConfig) string {
		if c.Service == nil || c.URL != nil {
			return "not a service"
		}
		return fmt.Sprintf("%s/%s:%d%s", c.Service.Namespace, c.Service.Name, *c.Service.Port, *c.Service.Path)
	}
	podRules := []string{"[CREATE] [] [v1] [pods] Namespaced"}
	workloadRules := []string{
		"[CREATE UPDATE] [apps] [v1] [deployments replicasets statefulsets daemonsets] Namespaced",
		"[CREATE UPDATE] [batch] [v1] [jobs cronjobs] Namespaced",
		"[CREATE UPDATE] [] [v1] [replicationcontrollers podtemplates] Namespaced",
	}
	podCond := []string{matchConditionName + ": " + podMatchCondition}
	workloadCond := []string{matchConditionName + ": " + workloadMatchCondition}
	base := func(name, path string, rules, conditions []string) hook {
		return hook{name: name, path: "dnsplane-system/dnsplane-webhook:443" + path, failurePolicy: "Fail", sideEffects: "None",
			versions: []string{"v1"}, timeout: 10, rules: rules, conditions: conditions}
	}
	wantMutating := []hook{base("pods.dns.dnsplane.io", "/mutate", podRules, podCond), base("workloads.dns.dnsplane.io", "/mutate", workloadRules, workloadCond)}
	wantValidating := []hook{base("pods.dns.dnsplane.io", "/validate", podRules, podCond), base("workloads.dns.dnsplane.io", "/validate", workloadRules, workloadCond),
		base("dnses.operator.dnsplane.io", "/validate", []string{"[CREATE UPDATE] [operator.dnsplane.io] [v1] [dnses] Cluster"}, nil)}

	mwc := decodeStrict[admissionregistrationv1.MutatingWebhookConfiguration](t, objs, "MutatingWebhookConfiguration//dnsplane")
	var gotMutating []hook
	for _, w := range mwc.Webhooks {
		gotMutating = append(gotMutating, hook{w.Name, svc(w.ClientConfig), string(*w.FailurePolicy), string(*w.SideEffects), w.AdmissionReviewVersions, *w.TimeoutSeconds, rulesOf(w.Rules), conds(w.MatchConditions), len(w.ClientConfig.CABundle)})
	}
	vwc := decodeStrict[admissionregistrationv1.ValidatingWebhookConfiguration](t, objs, "ValidatingWebhookConfiguration//dnsplane")
	var gotValidating []hook
	for _, w := range vwc.Webhooks {
		gotValidating = append(gotValidating, hook{w.Name, svc(w.ClientConfig), string(*w.FailurePolicy), string(*w.SideEffects), w.AdmissionReviewVersions, *w.TimeoutSeconds, rulesOf(w.Rules), conds(w.MatchConditions), len(w.ClientConfig.CABundle)})
	}
	for _, c := range []struct {
		kind      string
		got, want []hook
	}{{"Mutating", gotMutating, wantMutating}, {"Validating", gotValidating, wantValidating}} {
		if fmt.Sprintf("%#v", c.got) != fmt.Sprintf("%#v", c.want) {
			t.Errorf("%sWebhookConfiguration dnsplane:\n got %#v\nwant %#v", c.kind, c.got, c.want)
		}
	}
	// Not even an empty one: kubectl apply --server-side and Helm would
	// then own the field and reset the CA the webhook injected.
	for _, k := range []string{"MutatingWebhookConfiguration//dnsplane", "ValidatingWebhookConfiguration//dnsplane"} {
		if bytes.Contains(objs[k], []byte("caBundle")) {
			t.Errorf("%s sets caBundle", k)
		}
	}
}

// TestWorkloads checks what the contract and the node cache need of the
// Deployments and the DaemonSet: images, arguments, the upgrade strategy.
func TestWorkloads(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(manifestsFile)
	if err != nil {
		t.Fatal(err)
	}
	objs := objectsOf(t, data)
	images := imagebuild.Images()
	fullImage, dnsImage := images[0].Ref(imagebuild.Registry, imagebuild.Version), images[1].Ref(imagebuild.Registry, imagebuild.Version)
	if dnsImage != operator.DefaultImage {
		t.Errorf("the data-plane image hack/image builds is %s; the operator's default --dns-image is %s", dnsImage, operator.DefaultImage)
	}
	if operator.Namespace != Namespace {
		t.Errorf("the operator's namespace is %s, the chart's %s", operator.Namespace, Namespace)
	}

	op := decodeStrict[appsv1.Deployment](t, objs, "Deployment/dnsplane-system/dnsplane-operator")
	opc := op.Spec.Template.Spec.Containers[0]
	if opc.Image != fullImage || !slices.Contains(opc.Args, "--dns-image="+dnsImage) || opc.Args[0] != "operator" ||
		*op.Spec.Replicas != 1 || op.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType || op.Spec.Template.Spec.ServiceAccountName != "dnsplane-operator" {
		t.Errorf("operator Deployment: image %s, args %v, replicas %d, strategy %s", opc.Image, opc.Args, *op.Spec.Replicas, op.Spec.Strategy.Type)
	}

	wh := decodeStrict[appsv1.Deployment](t, objs, "Deployment/dnsplane-system/dnsplane-webhook")
	whc := wh.Spec.Template.Spec.Containers[0]
	wantArgs := []string{"webhook", "--listen=:9443", "--cluster-dns=169.254.20.10,10.96.0.53", "--node-cache=", "--cluster-domain=cluster.local", "--log-level=info"}
	if whc.Image != fullImage || !slices.Equal(whc.Args, wantArgs) || *wh.Spec.Replicas != 2 || whc.Ports[0].ContainerPort != 9443 {
		t.Errorf("webhook Deployment: image %s, args %v (want %v), replicas %d", whc.Image, whc.Args, wantArgs, *wh.Spec.Replicas)
	}
	svc := decodeStrict[corev1.Service](t, objs, "Service/dnsplane-system/dnsplane-webhook")
	if p := svc.Spec.Ports[0]; p.Port != 443 || p.TargetPort.StrVal != whc.Ports[0].Name {
		t.Errorf("webhook Service port %d -> %s, want 443 -> %s (9443)", p.Port, p.TargetPort.String(), whc.Ports[0].Name)
	}
	if _, ok := objs["PodDisruptionBudget/dnsplane-system/dnsplane-webhook"]; !ok {
		t.Error("no PodDisruptionBudget for the webhook's two replicas")
	}

	nc := decodeStrict[appsv1.DaemonSet](t, objs, "DaemonSet/dnsplane-system/dnsplane-nodecache")
	ps := nc.Spec.Template.Spec
	ncc := ps.Containers[0]
	wantArgs = []string{"nodecache", "--listen=169.254.20.10:53", "--cluster-dns=10.96.0.53:53", "--cluster-domain=cluster.local", "--cache-ttl=30",
		"--health=169.254.20.10:8080", "--metrics=169.254.20.10:9253", "--setup-interface", "--interface-name=nodelocaldns", "--local-ip=169.254.20.10", "--log-level=info"}
	ru := nc.Spec.UpdateStrategy.RollingUpdate
	if ncc.Image != dnsImage || !slices.Equal(ncc.Args, wantArgs) || !ps.HostNetwork || ps.DNSPolicy != corev1.DNSDefault ||
		ru == nil || ru.MaxSurge.IntValue() != 1 || ru.MaxUnavailable.IntValue() != 0 || len(ncc.Ports) != 0 {
		t.Errorf("node cache DaemonSet: image %s, args %v (want %v), hostNetwork %v, dnsPolicy %s, rollingUpdate %+v, ports %v", ncc.Image, ncc.Args, wantArgs, ps.HostNetwork, ps.DNSPolicy, ru, ncc.Ports)
	}
	if caps := ncc.SecurityContext.Capabilities; !slices.Equal(caps.Add, []corev1.Capability{"NET_ADMIN", "NET_BIND_SERVICE"}) || !slices.Equal(caps.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("node cache capabilities %+v", caps)
	}
	if v := ps.Volumes[0]; v.HostPath == nil || v.HostPath.Path != "/run/dnsplane-nodecache" || ncc.VolumeMounts[0].MountPath != "/run/dnsplane-nodecache" {
		t.Errorf("node cache volumes %+v, mounts %+v", ps.Volumes, ncc.VolumeMounts)
	}
	for _, d := range []*appsv1.Deployment{op, wh} {
		if sc := d.Spec.Template.Spec.SecurityContext; sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || *sc.RunAsUser != imagebuild.NonRoot {
			t.Errorf("%s runs as %+v", d.Name, sc)
		}
	}
}
