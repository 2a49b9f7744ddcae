package deploy

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// TestChartValues renders the chart with Helm under values that change
// its shape and checks each change lands where the values say.
func TestChartValues(t *testing.T) {
	t.Parallel()
	helm := helmBinary(t)
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, objs map[string][]byte)
	}{
		{"defaults leave the namespace to --create-namespace", nil, func(t *testing.T, objs map[string][]byte) {
			t.Helper()
			if _, ok := objs["Namespace//dnsplane-system"]; ok {
				t.Error("the Namespace is rendered without namespace.create")
			}
		}},
		{"host search and cluster", []string{"--set", "hostSearch={corp.example,example.com}", "--set", "clusterDNS={10.0.0.10,10.0.0.11}", "--set", "clusterDomain=k8s.example"}, func(t *testing.T, objs map[string][]byte) {
			t.Helper()
			wh := decodeStrict[appsv1.Deployment](t, objs, "Deployment/dnsplane-system/dnsplane-webhook")
			args := wh.Spec.Template.Spec.Containers[0].Args
			for _, want := range []string{"--host-search=corp.example,example.com", "--cluster-dns=169.254.20.10,10.0.0.10,10.0.0.11", "--cluster-domain=k8s.example"} {
				if !slices.Contains(args, want) {
					t.Errorf("webhook args %v lack %s", args, want)
				}
			}
			nc := decodeStrict[appsv1.DaemonSet](t, objs, "DaemonSet/dnsplane-system/dnsplane-nodecache")
			if args := nc.Spec.Template.Spec.Containers[0].Args; !slices.Contains(args, "--cluster-dns=10.0.0.10:53,10.0.0.11:53") {
				t.Errorf("node cache args %v", args)
			}
		}},
		{"no node cache", []string{"--set", "nodeCache.enabled=false"}, func(t *testing.T, objs map[string][]byte) {
			t.Helper()
			if _, ok := objs["DaemonSet/dnsplane-system/dnsplane-nodecache"]; ok {
				t.Error("node cache DaemonSet rendered")
			}
			wh := decodeStrict[appsv1.Deployment](t, objs, "Deployment/dnsplane-system/dnsplane-webhook")
			// The flag's default would name a node cache that is not there.
			args := wh.Spec.Template.Spec.Containers[0].Args
			if !slices.Contains(args, "--node-cache=") || !slices.Contains(args, "--cluster-dns=10.96.0.53") {
				t.Errorf("webhook args %v: want --node-cache= and --cluster-dns=10.96.0.53", args)
			}
		}},
		{"node cache without interface setup", []string{"--set", "nodeCache.setupInterface=false", "--set", "nodeCache.ip=169.254.0.53"}, func(t *testing.T, objs map[string][]byte) {
			t.Helper()
			nc := decodeStrict[appsv1.DaemonSet](t, objs, "DaemonSet/dnsplane-system/dnsplane-nodecache")
			args := nc.Spec.Template.Spec.Containers[0].Args
			if slices.Contains(args, "--setup-interface") || !slices.Contains(args, "--listen=169.254.0.53:53") {
				t.Errorf("node cache args %v", args)
			}
		}},
		{"one webhook replica has no disruption budget", []string{"--set", "webhook.replicas=1"}, func(t *testing.T, objs map[string][]byte) {
			t.Helper()
			if _, ok := objs["PodDisruptionBudget/dnsplane-system/dnsplane-webhook"]; ok {
				t.Error("PodDisruptionBudget rendered for one replica: it would block every drain")
			}
		}},
		{"kept CRD", []string{"--set", "crd.keep=true"}, func(t *testing.T, objs map[string][]byte) {
			t.Helper()
			crd := decodeStrict[apiextv1.CustomResourceDefinition](t, objs, "CustomResourceDefinition//dnses.operator.dnsplane.io")
			if crd.Annotations["helm.sh/resource-policy"] != "keep" {
				t.Errorf("CRD annotations %v", crd.Annotations)
			}
		}},
		{"no CRD", []string{"--set", "crd.install=false"}, func(t *testing.T, objs map[string][]byte) {
			t.Helper()
			if _, ok := objs["CustomResourceDefinition//dnses.operator.dnsplane.io"]; ok {
				t.Error("CRD rendered")
			}
		}},
		{"images", []string{"--set", "images.dns.repository=registry.example/dns", "--set", "images.dns.tag=dev", "--set", "images.dnsplane.repository=registry.example/full"}, func(t *testing.T, objs map[string][]byte) {
			t.Helper()
			op := decodeStrict[appsv1.Deployment](t, objs, "Deployment/dnsplane-system/dnsplane-operator")
			c := op.Spec.Template.Spec.Containers[0]
			if c.Image != "registry.example/full:v0.1.0" || !slices.Contains(c.Args, "--dns-image=registry.example/dns:dev") {
				t.Errorf("operator image %s args %v", c.Image, c.Args)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, err := helmTemplate(t, helm, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, objectsOf(t, out))
		})
	}

	t.Run("another namespace is refused", func(t *testing.T) {
		t.Parallel()
		cmdOut, err := helmTemplateIn(t, helm, "kube-system")
		if err == nil || !strings.Contains(err.Error(), "install dnsplane into the namespace dnsplane-system") {
			t.Errorf("helm template -n kube-system: %v\n%s", err, cmdOut)
		}
	})
}
