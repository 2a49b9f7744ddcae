package e2e

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// TestDNSOperatorPoliciesSurviveADeadNameserver is the test plan's "kill
// one of two nameservers and see each policy still answer via the other"
// (docs/dns-operator.md, "The seed's end-to-end test"):
// foo.com forwards to a stopped nameserver and a live one, with policy
// Random, RoundRobin and Sequential in turn (the dead one listed first,
// so Sequential always meets it first), and every query is answered by
// the live one. Each policy has a live nameserver of its own, so the
// first answer from it shows the new Corefile is served.
func TestDNSOperatorPoliciesSurviveADeadNameserver(t *testing.T) {
	requireKubectl(t)
	dead := newStoppableNameserver(t, "foo.com", "192.0.2.1")
	dead.stop()
	def := startNameserver(t, ".", "192.0.2.100")
	u := startUp(t, filepath.Join(t.TempDir(), "data"), nil, "--upstream", def.Addr)
	for i, policy := range []string{"Random", "RoundRobin", "Sequential"} {
		t.Run(policy, func(t *testing.T) {
			liveIP := fmt.Sprintf("192.0.2.%d", 11+i)
			live := newStoppableNameserver(t, "foo.com", liveIP)
			mustKubectl(t, u.Kubeconfig, fmt.Sprintf(`apiVersion: operator.dnsplane.io/v1
kind: DNS
metadata:
  name: default
spec:
  pluginConfig:
    forwardPlugins:
    - domain: foo.com
      nameServers: [%q, %q]
      policy: %s
`, dead.Addr, live.Addr, policy), "apply", "-f", "-")
			eventually(t, 30*time.Second, 50*time.Millisecond, func() (bool, string) {
				ip, err := lookupA(u.ClusterDNS, "first.foo.com.")
				return err == nil && ip == liveIP, fmt.Sprintf("first.foo.com: %q, %v; want %s", ip, err, liveIP)
			})
			for i := range 30 {
				name := fmt.Sprintf("q%d.foo.com.", i)
				ip, err := lookupA(u.ClusterDNS, name)
				if err != nil || ip != liveIP {
					t.Fatalf("policy %s, %s: %q, %v; want the live nameserver's %s", policy, name, ip, err, liveIP)
				}
			}
		})
	}
}
