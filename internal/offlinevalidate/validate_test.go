package offlinevalidate

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/dnsplane/dnsplane/internal/operator"
	"github.com/dnsplane/dnsplane/internal/validation"
)

func stringSource(name, content string) Source {
	return Source{Name: name, open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(content)), nil }}
}

var allOn = validation.Options{RelaxedDNSSearchValidation: true, PodDNSCustomPolicy: true, PodDNSAutopath: true}

func TestValidateSourceFindings(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		wantStatus []Status
		want       []string
	}{
		{name: "valid pod", in: "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i}]}\n",
			wantStatus: []Status{Valid}},
		{name: "missing field points at its parent", in: "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: i}]\n  dnsPolicy: Custom\n",
			wantStatus: []Status{Invalid},
			want:       []string{"x:4:1: spec.dnsParams: Required value: must be set when `dnsPolicy` is Custom"}},
		{name: "None without dnsConfig", in: "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: i}]\n  dnsPolicy: None\n",
			wantStatus: []Status{Invalid},
			want:       []string{"x:4:1: spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None"}},
		// issue 29: a newline in an option was accepted, and the node
		// agent then refused the pod for ever.
		{name: "dnsParams option with a newline", in: "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: i}]\n  dnsPolicy: Custom\n  dnsParams:\n    custom:\n      options: [rotate, \"edns0\\nnameserver 6.6.6.6\"]\n",
			wantStatus: []Status{Invalid},
			want: []string{`x:9:25: spec.dnsParams.custom.options[1]: Invalid value: "edns0\nnameserver 6.6.6.6": must be a single word, without whitespace or control characters: ` +
				`it is written into the pod's resolv.conf, where whitespace splits it and a newline starts a line of its own`}},
		{name: "template dnsConfig option value with a newline", in: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec:\n      containers: [{name: c, image: i}]\n      dnsConfig:\n        options: [{name: timeout, value: \"1\\r\\nnameserver 6.6.6.6\"}]\n",
			wantStatus: []Status{Invalid},
			want: []string{`x:11:35: spec.template.spec.dnsConfig.options[0].value: Invalid value: "1\r\nnameserver 6.6.6.6": must be a single word, without whitespace or control characters: ` +
				`it is written into the pod's resolv.conf, where whitespace splits it and a newline starts a line of its own`}},
		{name: "bad apiVersion", in: "apiVersion: a/b/c\nkind: Pod\n", wantStatus: []Status{Invalid},
			want: []string{`x:1:1: apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c`}},
		{name: "fatal decode error", in: "apiVersion: v1\nkind: Pod\nspec: {hostNetwork: maybe}\n", wantStatus: []Status{Invalid},
			want: []string{"x:1:1: json: cannot unmarshal string into Go struct field PodSpec.spec.hostNetwork of type bool"}},
		// The server's whole create validation, not only pod DNS: metadata
		// with the kind's name rule, and the kind's own rules.
		// A Service name is a DNS label (upstream's rule since
		// RelaxedServiceNameValidation; before, a DNS-1035 label).
		{name: "service name is a DNS label", in: "apiVersion: v1\nkind: Service\nmetadata: {name: web.1}\nspec: {ports: [{port: 80}]}\n",
			wantStatus: []Status{Invalid},
			want:       []string{`x:3:12: metadata.name: Invalid value: "web.1": must not contain dots`}},
		// The target port defaults to the port, so upstream reports both.
		{name: "service port out of range", in: "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 0}]}\n",
			wantStatus: []Status{Invalid},
			want: []string{
				`x:4:17: spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive`,
				`x:4:16: spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive`,
			}},
		{name: "name or generateName required", in: "apiVersion: v1\nkind: ConfigMap\ndata: {a: b}\n",
			wantStatus: []Status{Invalid},
			want:       []string{"x:1:1: metadata.name: Required value: name or generateName is required"}},
		{name: "generateName stands in for the name", in: "apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: cfg-}\n",
			wantStatus: []Status{Valid}},
		// The DNS operator resource: its strategy's rules, with positions.
		{name: "valid DNS", in: "apiVersion: operator.dnsplane.io/v1\nkind: DNS\nmetadata: {name: default}\nspec:\n  pluginConfig:\n    forwardPlugins:\n    - {domain: foo.com, nameServers: [1.2.3.4, \"5.6.7.8:5353\"], policy: RoundRobin}\n",
			wantStatus: []Status{Valid}},
		{name: "DNS rules", in: "apiVersion: operator.dnsplane.io/v1\nkind: DNS\nmetadata: {name: dns}\nspec:\n  pluginConfig:\n    forwardPlugins:\n    - domain: svc.cluster.local\n      nameServers:\n      - 1.2.3.4\n      - 1.2.3.4:99999\n      policy: Fastest\n",
			wantStatus: []Status{Invalid},
			want: []string{
				`x:3:12: metadata.name: Invalid value: "dns": must be "default": the DNS resource is a singleton`,
				`x:7:7: spec.pluginConfig.forwardPlugins[0].domain: Invalid value: "svc.cluster.local": must not be a subdomain of the cluster domain "cluster.local": the cluster DNS answers those names itself`,
				`x:10:9: spec.pluginConfig.forwardPlugins[0].nameServers[1]: Invalid value: "1.2.3.4:99999": port must be between 1 and 65535, inclusive`,
				`x:11:7: spec.pluginConfig.forwardPlugins[0].policy: Unsupported value: "Fastest": supported values: "Random", "RoundRobin", "Sequential"`,
			}},
		// issue 29: the cluster DNS Service's address was accepted.
		{name: "DNS forwarding to the cluster DNS Service", in: "apiVersion: operator.dnsplane.io/v1\nkind: DNS\nmetadata: {name: default}\nspec:\n  upstreamResolvers:\n    upstreams:\n    - {type: Network, address: 10.96.0.10}\n  pluginConfig:\n    forwardPlugins:\n    - {domain: foo.com, nameServers: [10.96.0.10, \"10.96.0.10:5353\"]}\n",
			wantStatus: []Status{Invalid},
			want: []string{
				`x:7:7: spec.upstreamResolvers.upstreams[0]: Invalid value: "10.96.0.10:53": must not be 10.96.0.10:53, an address this cluster's DNS serves on: the query would come back to it (a forwarding loop)`,
				`x:10:39: spec.pluginConfig.forwardPlugins[0].nameServers[0]: Invalid value: "10.96.0.10": must not be 10.96.0.10:53, an address this cluster's DNS serves on: the query would come back to it (a forwarding loop)`,
			}},
		{name: "DNS unknown field", in: "apiVersion: operator.dnsplane.io/v1\nkind: DNS\nmetadata: {name: default}\nspec:\n  pluginConfig:\n    forwardPlugins:\n    - domain: foo.com\n      nameservers: [1.2.3.4]\n",
			wantStatus: []Status{Invalid},
			want: []string{
				`x:7:7: spec.pluginConfig.forwardPlugins[0].nameServers: Required value: at least 1 nameserver is required`,
				`x:8:7: spec.pluginConfig.forwardPlugins[0].nameservers: unknown field "spec.pluginConfig.forwardPlugins[0].nameservers"`,
			}},
		{name: "two documents", in: "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\napiVersion: example.com/v1\nkind: Widget\n",
			wantStatus: []Status{Valid, Skipped}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := Validator{Options: allOn}.ValidateSource(context.Background(), stringSource("x", tt.in))
			var statuses []Status
			var got []string
			for _, o := range objs {
				statuses = append(statuses, o.Status)
				for _, f := range o.Findings {
					got = append(got, f.String())
				}
			}
			if len(statuses) != len(tt.wantStatus) {
				t.Fatalf("statuses %v, want %v", statuses, tt.wantStatus)
			}
			for i := range statuses {
				if statuses[i] != tt.wantStatus[i] {
					t.Errorf("object %d: status %v, want %v", i, statuses[i], tt.wantStatus[i])
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestPodFromCarrier(t *testing.T) {
	in := `apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: jobs}
spec:
  schedule: "0 0 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          containers: [{name: c, image: i}]
          dnsPolicy: ClusterFirstWithAutopath
          restartPolicy: Never
`
	pod, _, err := Validator{Options: allOn}.Pod(context.Background(), stringSource("cj.yaml", in))
	if err != nil {
		t.Fatal(err)
	}
	if pod.Namespace != "jobs" || pod.Spec.DNSPolicy != "ClusterFirstWithAutopath" || pod.Spec.Containers[0].Name != "c" {
		t.Errorf("pod = %s/%s %+v", pod.Namespace, pod.Name, pod.Spec.PodSpec)
	}

	_, findings, err := Validator{}.Pod(context.Background(), stringSource("cj.yaml", in))
	if !errors.Is(err, ErrInvalid) || len(findings) != 1 || !strings.Contains(findings[0].String(), `Unsupported value: "ClusterFirstWithAutopath"`) {
		t.Errorf("with gates off: err=%v findings=%v", err, findings)
	}

	if _, _, err := (Validator{}).Pod(context.Background(), stringSource("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")); err == nil ||
		!strings.Contains(err.Error(), "a ConfigMap has no pod spec") {
		t.Errorf("ConfigMap: err = %v", err)
	}
}

// TestDNS: the DNS of `dnsplane corefile`, defaulted as stored, with the
// cluster domain the Validator is given.
func TestDNS(t *testing.T) {
	const dns = "apiVersion: operator.dnsplane.io/v1\nkind: DNS\nmetadata: {name: default}\nspec:\n  pluginConfig:\n    forwardPlugins:\n    - {domain: corp.example, nameServers: [192.0.2.1]}\n"
	got, findings, err := Validator{}.DNS(context.Background(), stringSource("x", dns))
	if err != nil || len(findings) != 0 {
		t.Fatalf("DNS: %v %v", err, findings)
	}
	if fp := got.Spec.PluginConfig.ForwardPlugins[0]; fp.Policy != "Random" || got.Spec.UpstreamResolvers.Policy != "Sequential" {
		t.Errorf("not defaulted: %+v", got.Spec)
	}
	_, findings, err = Validator{ClusterDomain: "corp.example"}.DNS(context.Background(), stringSource("x", dns))
	if !errors.Is(err, ErrInvalid) || len(findings) != 1 || findings[0].Field != "spec.pluginConfig.forwardPlugins[0].domain" {
		t.Errorf("with cluster domain corp.example: %v %v", err, findings)
	}
	if _, _, err := (Validator{}).DNS(context.Background(), stringSource("x", "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n")); err == nil || errors.Is(err, ErrInvalid) {
		t.Errorf("a Namespace: %v", err)
	}
}

// TestDefaultOwnDNSAddresses: validate's default is the operator's
// cluster DNS Service address for up's default service range.
func TestDefaultOwnDNSAddresses(t *testing.T) {
	t.Parallel()
	_, n, _ := net.ParseCIDR("10.96.0.0/12")
	want, err := operator.ServiceAddress(n)
	if err != nil {
		t.Fatal(err)
	}
	if len(DefaultOwnDNSAddresses) != 1 || DefaultOwnDNSAddresses[0] != want {
		t.Errorf("DefaultOwnDNSAddresses = %v, want [%v]", DefaultOwnDNSAddresses, want)
	}
}
