package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDNSOperatorUpWithUnloadableDNS: a stored DNS whose Corefile CoreDNS
// refuses (a TLS forwarder whose CA bundle is not a certificate), with no
// Corefile published before, must not keep `up` waiting: the operator
// publishes the default spec's Corefile, the cluster DNS serves it, and
// Degraded says why.
func TestDNSOperatorUpWithUnloadableDNS(t *testing.T) {
	requireKubectl(t)
	def := startNameserver(t, ".", "192.0.2.100")
	dataDir := filepath.Join(t.TempDir(), "data")
	u := startUp(t, dataDir, nil, "--upstream", def.Addr)
	mustKubectl(t, u.Kubeconfig, `apiVersion: v1
kind: ConfigMap
metadata:
  name: bad-ca
  namespace: dnsplane-system
data:
  ca-bundle.crt: not a certificate
---
apiVersion: operator.dnsplane.io/v1
kind: DNS
metadata:
  name: default
spec:
  pluginConfig:
    forwardPlugins:
    - domain: tls.test
      nameServers: ["127.0.0.1:853"]
      transportConfig:
        transport: TLS
        tls:
          serverName: dns.tls.test
          caBundle: {name: bad-ca}
`, "apply", "-f", "-")
	degraded := func() string {
		return mustKubectl(t, u.Kubeconfig, "", "get", "dns", "default", "-o",
			`jsonpath={.status.conditions[?(@.type=="Degraded")].reason} {.status.conditions[?(@.type=="Degraded")].message}`)
	}
	eventually(t, 30*time.Second, 100*time.Millisecond, func() (bool, string) {
		d := degraded()
		return strings.HasPrefix(d, "CorefileRejected "), d
	})
	if err := u.stop(); err != nil {
		t.Fatal(err)
	}
	// No Corefile published: the state of a data dir whose DNS never
	// loaded. Deleted through the API server alone, so that no operator
	// publishes one before `up` starts again.
	api := startServer(t, dataDir)
	mustKubectl(t, api.Kubeconfig, "", "delete", "configmap", "-n", "dnsplane-system", "dns-default")
	api.stopOK(t)

	start := time.Now()
	u = startUp(t, dataDir, nil, "--upstream", def.Addr)
	t.Logf("up with an unloadable stored DNS and no Corefile: serving after %v", time.Since(start).Round(time.Millisecond))
	if ip, err := lookupA(u.ClusterDNS, "www.example.org."); err != nil || ip != def.IP {
		t.Errorf("www.example.org: %q, %v; want the upstream's %s", ip, err, def.IP)
	}
	eventually(t, 30*time.Second, 100*time.Millisecond, func() (bool, string) {
		d := degraded()
		return strings.HasPrefix(d, "CorefileRejected ") && strings.Contains(d, "default DNS spec is served"), d
	})
	corefile := mustKubectl(t, u.Kubeconfig, "", "get", "configmap", "-n", "dnsplane-system", "dns-default", "-o", "jsonpath={.data.Corefile}")
	if strings.Contains(corefile, "tls.test") {
		t.Errorf("the published Corefile has the rejected forwarder:\n%s", corefile)
	}
}
