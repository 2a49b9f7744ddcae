package e2e

import (
	"strings"
	"testing"
)

// TestKubectlExplain checks what kubectl explain prints for dnsplane's
// fields: the descriptions written in api/ (hack/swaggerdoc), dnsPolicy's
// with all six policies at every pod spec path, and upstream's for the
// fields dnsplane inherits.
func TestKubectlExplain(t *testing.T) {
	requireKubectl(t)
	kc := sharedServer(t).Kubeconfig
	dnsPolicyValues := []string{
		"Possible enum values:",
		"- `\"ClusterFirstWithHostNet\"` is ClusterFirst for every pod",
		"- `\"ClusterFirst\"` resolves through the cluster DNS",
		"- `\"Default\"` takes the nameservers",
		"- `\"None\"` gives no nameserver",
		"- `\"Custom\"` resolves through the cluster DNS with the search list and options of dnsParams.custom",
		"- `\"ClusterFirstWithAutopath\"` gives the single search path",
	}
	for _, tc := range []struct {
		path string
		want []string // in order, compared with whitespace collapsed
		// complete: every field listed has a description
		complete bool
	}{
		{
			path: "pod.spec.dnsParams.custom",
			want: []string{
				"FIELD: custom <PodDNSParamsCustom>",
				"DESCRIPTION: Custom is the search list and options of dnsPolicy Custom",
				"PodDNSParamsCustom is the search list and the options of a pod with dnsPolicy Custom.",
				"options <[]string> Options of the resolv.conf options line",
				"search <[]string> Search entries, in order",
				"$(NAMESPACE) (the pod's namespace)",
			},
			complete: true,
		},
		{
			path:     "pod.spec.dnsPolicy",
			want:     append([]string{"FIELD: dnsPolicy <string>", "DESCRIPTION: DNS policy for the pod"}, dnsPolicyValues...),
			complete: true,
		},
		{
			path:     "cronjob.spec.jobTemplate.spec.template.spec.dnsPolicy",
			want:     dnsPolicyValues,
			complete: true,
		},
		{
			path: "deployment.spec.template.spec.dnsParams",
			want: []string{
				"FIELD: dnsParams <PodDNSParams>",
				"DESCRIPTION: DNSParams are the parameters of the pod's DNS policy",
				"custom <PodDNSParamsCustom> Custom is the search list",
			},
			complete: true,
		},
		{
			// The redeclared template is described as ours, the inherited
			// replicas as upstream's.
			path: "deployment.spec",
			want: []string{
				"replicas <integer> Number of desired pods.",
				"template <PodTemplateSpec> Template describes the pods the Deployment creates; its spec may carry dnsParams.",
			},
			complete: true,
		},
		{
			path: "pod",
			want: []string{
				"DESCRIPTION: Pod is a group of containers",
				"spec <PodSpec> Spec is the desired behavior of the pod",
			},
			complete: true,
		},
		{
			// api/operator/v1's field comments come with the DNS operator;
			// its types are described already.
			path: "dns.spec",
			want: []string{"FIELD: spec <DNSSpec>", "is the desired cluster DNS configuration."},
		},
		{
			// The +kubebuilder:validation:Enum markers reach the OpenAPI
			// (hack/swaggerdoc, internal/openapi/markers.go).
			path: "dns.spec.logLevel",
			want: []string{"FIELD: logLevel <string>", "ENUM:", "Normal", "Debug", "Trace"},
		},
	} {
		t.Run(tc.path, func(t *testing.T) {
			out := mustKubectl(t, kc, "", "explain", tc.path)
			flat := strings.Join(strings.Fields(out), " ")
			rest := flat
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Errorf("explain %s: no %q (in order) in\n%s", tc.path, w, out)
					break
				}
				rest = rest[i+len(w):]
			}
			if strings.Contains(out, "<empty>") || (tc.complete && strings.Contains(out, "<no description>")) {
				t.Errorf("explain %s: a description is missing:\n%s", tc.path, out)
			}
			// Upstream's dnsPolicy text names four policies; ours replaces it.
			if strings.Contains(flat, "Valid values are 'ClusterFirstWithHostNet', 'ClusterFirst', 'Default' or 'None'") {
				t.Errorf("explain %s: upstream's dnsPolicy description:\n%s", tc.path, out)
			}
		})
	}
}
