package render

import (
	"strings"
	"testing"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
)

// TestNoServiceAccount: the dry load's rendering differs from the
// cluster's in the kubernetes plugin's connection only (an endpoint
// line), and not when a kubeconfig is given.
func TestNoServiceAccount(t *testing.T) {
	t.Parallel()
	spec := &operatorv1.DNSSpec{PluginConfig: operatorv1.PluginConfig{ForwardPlugins: []operatorv1.ForwardPlugin{
		{Domain: "foo.com", NameServers: []string{"192.0.2.1"}}}}}
	cluster, _, err := Corefile(spec, Options{CABundles: map[string]string{}})
	if err != nil {
		t.Fatal(err)
	}
	check, _, err := Corefile(spec, Options{CABundles: map[string]string{}, NoServiceAccount: true})
	if err != nil {
		t.Fatal(err)
	}
	const endpoint = "        endpoint " + offlineAPIServer + "\n"
	if !strings.Contains(string(check), endpoint) {
		t.Fatalf("no %q in:\n%s", endpoint, check)
	}
	if got := strings.Replace(string(check), endpoint, "", 1); got != string(cluster) {
		t.Errorf("the dry load's Corefile differs beyond the endpoint:\n%s\nthe cluster's:\n%s", check, cluster)
	}
	withKubeconfig, _, err := Corefile(spec, Options{Kubeconfig: "/k", NoServiceAccount: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(withKubeconfig), "endpoint") {
		t.Errorf("a kubeconfig was replaced:\n%s", withKubeconfig)
	}
}
