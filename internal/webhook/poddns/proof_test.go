package poddns

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/record"
	"k8s.io/kubernetes/pkg/apis/core"
	corev1conv "k8s.io/kubernetes/pkg/apis/core/v1"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	kubeletdns "k8s.io/kubernetes/pkg/kubelet/network/dns"

	"github.com/dnsplane/dnsplane/api"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/dnsparams"
	"github.com/dnsplane/dnsplane/internal/resolvconf"
)

// stock is the cluster the proof runs against: kubelet's defaults for a
// kubeadm cluster, a NodeLocal DNSCache address and a corporate host search
// list for $(HOST).
var stock = Cluster{
	ClusterDNS:    []string{"10.96.0.10"},
	ClusterDomain: "cluster.local",
	NodeCache:     []string{"169.254.20.10"},
	HostSearch:    []string{"corp.example.com", "example.com"},
}

// proofCase is a pod as its user writes it on a stock cluster.
type proofCase struct {
	name      string
	cluster   *Cluster // nil: stock
	namespace string   // "" : ns1
	policy    corev1.DNSPolicy
	search    []string // dnsParams.custom.search (Custom)
	options   []string // dnsParams.custom.options (Custom)
	dnsConfig *corev1.PodDNSConfig
	// wantErr: the rewrite must refuse, as the agent would fail the pod.
	wantErr bool
}

func ptr[T any](v T) *T { return &v }

func many(prefix string, n, width int) []string {
	var out []string
	for i := range n {
		s := fmt.Sprintf("%s%d", prefix, i)
		for len(s) < width {
			s += "x"
		}
		out = append(out, s+".example")
	}
	return out
}

func proofCases() []proofCase {
	custom := dpcorev1.DNSCustom
	autopath := dpcorev1.DNSClusterFirstWithAutopath
	emptyHost := stock
	emptyHost.HostSearch = nil
	noCache := stock
	noCache.NodeCache = nil
	trailingDot := stock
	trailingDot.ClusterDomain = "cluster.local."
	customDomain := stock
	customDomain.ClusterDomain = "k8s.corp.example"
	noDomain := stock
	noDomain.ClusterDomain = ""
	twoDNS := stock
	twoDNS.ClusterDNS = []string{"10.96.0.10", "fd00::a"}
	longHost := stock
	longHost.HostSearch = many("h", 6, 1)
	return []proofCase{
		{name: "custom seed 001 example", policy: custom,
			search: []string{"$(NAMESPACE).svc.$(CLUSTER)", "my.dns.search.suffix", "$(HOST)"}, options: []string{"ndots:2"}},
		{name: "custom namespace substitution", policy: custom, namespace: "team-a", search: []string{"$(NAMESPACE).svc.$(CLUSTER)"}},
		{name: "custom cluster substitution", policy: custom, search: []string{"svc.$(CLUSTER)", "$(CLUSTER)"}},
		{name: "custom host substitution only", policy: custom, search: []string{"$(HOST)"}},
		{name: "custom host with empty host search", cluster: &emptyHost, policy: custom, search: []string{"a.example", "$(HOST)"}},
		{name: "custom no search at all", policy: custom, options: []string{"ndots:1"}},
		{name: "custom options several", policy: custom, search: []string{"a.example"}, options: []string{"ndots:3", "timeout:2", "attempts:3", "rotate", "edns0", "single-request-reopen"}},
		{name: "custom duplicates with host", policy: custom, search: []string{"corp.example.com", "$(HOST)"}},
		{name: "custom duplicates in list", policy: custom, search: []string{"a.example", "a.example", "$(NAMESPACE).svc.$(CLUSTER)", "ns1.svc.cluster.local"}},
		{name: "custom relaxed search KEP-4427", policy: custom, search: []string{"_sip._tcp.example.com", "$(HOST)"}},
		{name: "custom user dnsConfig merged", policy: custom, search: []string{"$(NAMESPACE).svc.$(CLUSTER)"}, options: []string{"ndots:2"},
			dnsConfig: &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}, Searches: []string{"extra.example", "ns1.svc.cluster.local"},
				Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr("4")}, {Name: "edns0"}}}},
		{name: "custom nameserver limit 3", policy: custom, search: []string{"a.example"},
			dnsConfig: &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1", "8.8.8.8", "9.9.9.9"}}},
		{name: "custom 32 searches limit", policy: custom, search: append(many("s", 30, 1), "$(HOST)"),
			dnsConfig: &corev1.PodDNSConfig{Searches: []string{"u1.example", "u2.example"}}},
		{name: "custom 2048 characters limit", policy: custom, search: many("long", 9, 200),
			dnsConfig: &corev1.PodDNSConfig{Searches: many("more", 3, 200)}},
		{name: "custom long host list", cluster: &longHost, policy: custom, search: append(many("p", 28, 1), "$(HOST)")},
		{name: "custom trailing-dot cluster domain", cluster: &trailingDot, policy: custom, search: []string{"$(NAMESPACE).svc.$(CLUSTER)"}},
		{name: "custom other cluster domain", cluster: &customDomain, policy: custom, search: []string{"$(NAMESPACE).svc.$(CLUSTER)", "$(HOST)"}},
		{name: "custom two cluster DNS families", cluster: &twoDNS, policy: custom, search: []string{"a.example"}},
		// The agent falls back to the node's nameservers, which the webhook
		// cannot know: it refuses rather than write a pod kube-apiserver
		// would refuse (None without nameservers).
		{name: "custom without cluster DNS", cluster: &Cluster{ClusterDomain: "cluster.local", HostSearch: []string{"corp.example.com"}}, policy: custom, search: []string{"$(HOST)"}, wantErr: true},
		{name: "autopath", policy: autopath},
		{name: "autopath other namespace", policy: autopath, namespace: "kube-system"},
		{name: "autopath user dnsConfig merged", policy: autopath,
			dnsConfig: &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}, Searches: []string{"extra.example"}, Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr("2")}}}},
		{name: "autopath nameserver limit", policy: autopath, dnsConfig: &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1", "8.8.8.8"}}},
		{name: "autopath without node cache", cluster: &noCache, policy: autopath},
		{name: "autopath with empty host search", cluster: &emptyHost, policy: autopath},
		{name: "autopath trailing-dot cluster domain", cluster: &trailingDot, policy: autopath},
		{name: "autopath other cluster domain", cluster: &customDomain, policy: autopath},
		{name: "autopath without cluster domain", cluster: &noDomain, policy: autopath, wantErr: true},
		{name: "custom $(CLUSTER) without cluster domain", cluster: &noDomain, policy: custom, search: []string{"$(CLUSTER)"}, wantErr: true},
	}
}

// userPod is the pod as its user writes it on a stock cluster: the
// parameters in the annotation, no spec.dnsParams.
func (c proofCase) userPod() *dpcorev1.Pod {
	ns := c.namespace
	if ns == "" {
		ns = "ns1"
	}
	pod := &dpcorev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns}}
	pod.Spec.DNSPolicy = c.policy
	pod.Spec.DNSConfig = c.dnsConfig.DeepCopy()
	pod.Spec.Containers = []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}
	if c.policy == dpcorev1.DNSCustom {
		pod.Annotations = map[string]string{dnsparams.Annotation: dnsparams.Encode(&dpcorev1.PodDNSParams{
			Custom: &dpcorev1.PodDNSParamsCustom{Search: c.search, Options: c.options}})}
	}
	return pod
}

func (c proofCase) clusterOrStock() Cluster {
	if c.cluster != nil {
		return *c.cluster
	}
	return stock
}

func specAt(pod *dpcorev1.Pod) api.PodSpecAt { return api.PodSpecs(pod)[0] }

// kubelet is what upstream's kubelet writes for pod, on any node: the
// rewritten pods are dnsPolicy None, whose config kubelet builds from
// dnsConfig alone, so the node's own flags do not matter (they are set to
// values that would show if they did).
func kubelet(t *testing.T, pod *dpcorev1.Pod) resolvconf.Config {
	t.Helper()
	c := kubeletdns.NewConfigurer(record.NewFakeRecorder(100), &corev1.ObjectReference{Kind: "Node", Name: "n"},
		nil, nil, "node.invalid", "")
	upstream := &corev1.Pod{ObjectMeta: pod.ObjectMeta, Spec: pod.Spec.PodSpec}
	got, err := c.GetPodDNS(context.Background(), upstream)
	if err != nil {
		t.Fatalf("kubelet GetPodDNS: %v", err)
	}
	return resolvconf.Config{Nameservers: got.Servers, Searches: got.Searches, Options: got.Options}
}

// TestRewriteMatchesKubelet is the proof: for every policy, substitution,
// limit and edge case, the resolver config upstream kubelet writes for the
// rewritten pod equals the one dnsplane's agent code computes for the pod
// as written, on the node the webhook describes.
func TestRewriteMatchesKubelet(t *testing.T) {
	t.Parallel()
	for _, tc := range proofCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cluster := tc.clusterOrStock()

			original := tc.userPod()
			restored := original.DeepCopy()
			Restore(specAt(restored))
			want, _, wantErr := resolvconf.ForPod(restored, cluster.Node())

			pod := tc.userPod()
			_, err := Rewrite(specAt(pod), nil, pod.Namespace, cluster)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("Rewrite err = nil (agent err = %v); want a refusal", wantErr)
				}
				return
			}
			if err != nil || wantErr != nil {
				t.Fatalf("Rewrite err = %v, agent err = %v", err, wantErr)
			}
			if pod.Spec.DNSPolicy != corev1.DNSNone || pod.Spec.DNSParams != nil {
				t.Fatalf("rewritten spec: dnsPolicy %q, dnsParams %v; want None and none", pod.Spec.DNSPolicy, pod.Spec.DNSParams)
			}
			if got := pod.Annotations[PolicyAnnotation]; got != string(tc.policy) {
				t.Errorf("annotation %s = %q, want %q", PolicyAnnotation, got, tc.policy)
			}
			if got, want := pod.Annotations[ParamsAnnotation], original.Annotations[ParamsAnnotation]; got != want {
				t.Errorf("annotation %s = %q, want it kept as %q", ParamsAnnotation, got, want)
			}
			// kube-apiserver validates the rewritten pod after admission:
			// its DNS fields must pass upstream's own rules.
			for _, e := range upstreamValidation(t, pod) {
				if strings.HasPrefix(e.Field, "spec.dns") {
					t.Errorf("kube-apiserver would refuse the rewritten pod: %v", e)
				}
			}
			got := kubelet(t, pod)
			assertSameConfig(t, "kubelet(rewritten)", got, "agent(original)", want)

			// Pods made from a rewritten template, and a second pass over
			// any rewritten spec, must come out the same.
			again := pod.DeepCopy()
			res, err := Rewrite(specAt(again), nil, again.Namespace, cluster)
			if err != nil {
				t.Fatalf("second Rewrite: %v", err)
			}
			if res.Changed || !equalDNSConfig(again.Spec.DNSConfig, pod.Spec.DNSConfig) {
				t.Errorf("second Rewrite changed=%v, dnsConfig %+v; want unchanged %+v", res.Changed, again.Spec.DNSConfig, pod.Spec.DNSConfig)
			}
			// The same on update, against the stored rewritten spec.
			upd := pod.DeepCopy()
			res, err = Rewrite(specAt(upd), ptr(specAt(pod.DeepCopy())), upd.Namespace, cluster)
			if err != nil || res.Changed {
				t.Errorf("Rewrite on an unchanged update: changed=%v err=%v", res.Changed, err)
			}
		})
	}
}

// upstreamValidation is kube-apiserver's create validation of pod.
func upstreamValidation(t *testing.T, pod *dpcorev1.Pod) []*field.Error {
	t.Helper()
	v1pod := &corev1.Pod{ObjectMeta: pod.ObjectMeta, Spec: pod.Spec.PodSpec}
	var internal core.Pod
	if err := corev1conv.Convert_v1_Pod_To_core_Pod(v1pod, &internal, nil); err != nil {
		t.Fatalf("converting to the internal Pod: %v", err)
	}
	return corevalidation.ValidatePodCreate(&internal, corevalidation.PodValidationOptions{})
}

// assertSameConfig compares two resolver configs: nameservers and searches
// in order, options as a set, since kubelet builds them from a Go map
// (mergeDNSOptions) and writes them in random order.
func assertSameConfig(t *testing.T, gotName string, got resolvconf.Config, wantName string, want resolvconf.Config) {
	t.Helper()
	if !slices.Equal(got.Nameservers, want.Nameservers) {
		t.Errorf("nameservers: %s %q, %s %q", gotName, got.Nameservers, wantName, want.Nameservers)
	}
	if !slices.Equal(got.Searches, want.Searches) {
		t.Errorf("searches: %s %q (%d), %s %q (%d)", gotName, got.Searches, len(got.Searches), wantName, want.Searches, len(want.Searches))
	}
	g, w := slices.Sorted(slices.Values(got.Options)), slices.Sorted(slices.Values(want.Options))
	if !slices.Equal(g, w) {
		t.Errorf("options: %s %q, %s %q", gotName, g, wantName, w)
	}
}

// TestProofCasesReachTheLimits keeps the limit rows honest: each must
// actually hit the limit it names, or the proof proves nothing about it.
func TestProofCasesReachTheLimits(t *testing.T) {
	t.Parallel()
	for _, tc := range proofCases() {
		if !strings.Contains(tc.name, "limit") {
			continue
		}
		pod := tc.userPod()
		Restore(specAt(pod))
		_, warnings, err := resolvconf.ForPod(pod, tc.clusterOrStock().Node())
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(warnings) == 0 {
			t.Errorf("%s: no limit was hit", tc.name)
		}
	}
}
