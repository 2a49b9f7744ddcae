package dns_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
)

var dnses = schema.GroupVersionResource{Group: "operator.dnsplane.io", Version: "v1", Resource: "dnses"}

func manifest(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// TestDNSThroughAPIServer: the strategy's rules are what the API server
// answers with. An invalid DNS gets a 422 whose causes name the field, a
// manifest with an unknown field is refused under strict field
// validation with the field's path, and in both cases nothing is stored.
func TestDNSThroughAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server")
	}
	ts := controlplanetest.StartTestServer(t, controlplane.Config{})
	client := dynamic.NewForConfigOrDie(ts.ClientConfig).Resource(dnses)
	ctx := context.Background()

	invalid := manifest(t, `
apiVersion: operator.dnsplane.io/v1
kind: DNS
metadata: {name: default}
spec:
  pluginConfig:
    forwardPlugins:
    - {domain: foo.com, nameServers: [192.0.2.1]}
    - {domain: bar.com, nameServers: [dns.bar.com]}
`)
	_, err := client.Create(ctx, invalid, metav1.CreateOptions{})
	var status *apierrors.StatusError
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) {
		t.Fatalf("create invalid: %v, want 422 Invalid", err)
	}
	st := status.Status()
	wantMsg := `DNS.operator.dnsplane.io "default" is invalid: spec.pluginConfig.forwardPlugins[1].nameServers[0]: Invalid value: "dns.bar.com": must be an IP address with an optional port: IPv4, IPv4:PORT, IPv6 or [IPv6]:PORT`
	if st.Code != http.StatusUnprocessableEntity || st.Message != wantMsg {
		t.Errorf("status %d %q,\nwant 422 %q", st.Code, st.Message, wantMsg)
	}
	if st.Details == nil || len(st.Details.Causes) != 1 || st.Details.Causes[0].Field != "spec.pluginConfig.forwardPlugins[1].nameServers[0]" ||
		st.Details.Causes[0].Type != metav1.CauseTypeFieldValueInvalid {
		t.Errorf("causes: %+v", st.Details)
	}
	if _, err := client.Get(ctx, "default", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after the refused create: %v, want NotFound", err)
	}

	unknown := manifest(t, `
apiVersion: operator.dnsplane.io/v1
kind: DNS
metadata: {name: default}
spec:
  pluginConfig:
    forwardPlugins:
    - {domain: foo.com, nameServers: [192.0.2.1], nameserver: 192.0.2.2}
`)
	_, err = client.Create(ctx, unknown, metav1.CreateOptions{FieldValidation: "Strict"})
	if !apierrors.IsBadRequest(err) || !strings.HasSuffix(err.Error(), `strict decoding error: unknown field "spec.pluginConfig.forwardPlugins[0].nameserver"`) {
		t.Fatalf("strict create: %v, want 400 naming spec.pluginConfig.forwardPlugins[0].nameserver", err)
	}
	if _, err := client.Get(ctx, "default", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after the strict refusal: %v, want NotFound", err)
	}

	// A valid DNS is stored with its defaults; an update breaking it is
	// refused and leaves it as it was.
	valid := manifest(t, `
apiVersion: operator.dnsplane.io/v1
kind: DNS
metadata: {name: default}
spec:
  pluginConfig:
    forwardPlugins:
    - {domain: foo.com, nameServers: [192.0.2.1]}
`)
	stored, err := client.Create(ctx, valid, metav1.CreateOptions{FieldValidation: "Strict"})
	if err != nil {
		t.Fatalf("create valid: %v", err)
	}
	policy, _, _ := unstructured.NestedString(stored.Object, "spec", "upstreamResolvers", "policy")
	fps, _, _ := unstructured.NestedSlice(stored.Object, "spec", "pluginConfig", "forwardPlugins")
	if policy != "Sequential" || len(fps) != 1 || fps[0].(map[string]any)["policy"] != "Random" {
		t.Errorf("stored without defaults: %v", stored.Object["spec"])
	}
	broken := stored.DeepCopy()
	fps[0].(map[string]any)["domain"] = "cluster.local"
	if err := unstructured.SetNestedSlice(broken.Object, fps, "spec", "pluginConfig", "forwardPlugins"); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Update(ctx, broken, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) ||
		!strings.Contains(err.Error(), `spec.pluginConfig.forwardPlugins[0].domain: Invalid value: "cluster.local": must not be the cluster domain`) {
		t.Errorf("update to the cluster domain: %v", err)
	}
	got, err := client.Get(ctx, "default", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetResourceVersion() != stored.GetResourceVersion() {
		t.Errorf("the refused update changed the object: resourceVersion %s, was %s", got.GetResourceVersion(), stored.GetResourceVersion())
	}
}

// TestClusterDomainFromServer: the API server keeps forwarders out of the
// cluster domain it was given (`up --cluster-domain`), not cluster.local.
func TestClusterDomainFromServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server")
	}
	ts := controlplanetest.StartTestServer(t, controlplane.Config{ClusterDomain: "corp.internal"})
	client := dynamic.NewForConfigOrDie(ts.ClientConfig).Resource(dnses)
	ctx := context.Background()
	dns := func(domain string) *unstructured.Unstructured {
		return manifest(t, `
apiVersion: operator.dnsplane.io/v1
kind: DNS
metadata: {name: default}
spec:
  pluginConfig:
    forwardPlugins:
    - {domain: `+domain+`, nameServers: [192.0.2.1]}
`)
	}
	_, err := client.Create(ctx, dns("svc.corp.internal"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `must not be a subdomain of the cluster domain "corp.internal"`) {
		t.Errorf("forwarding inside the cluster domain: %v, want 422 naming corp.internal", err)
	}
	if _, err := client.Create(ctx, dns("svc.cluster.local"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Errorf("cluster.local is not this cluster's domain, forwarding it is allowed: %v", err)
	}
}
