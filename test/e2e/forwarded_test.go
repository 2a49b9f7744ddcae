package e2e

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestForwardedZonesReachPods is issue 18's first item as a user meets it:
// `dnsplane up` with its agent and DNS on port 53, a DNS resource that
// forwards fwd.test to a private nameserver and sends every other name to
// resolvers of its own, and pods of ClusterFirst, ClusterFirstWithAutopath
// and Custom. The node's host search list is corp.test fwd.test. Through
// the node cache, and on a second node whose node cache is down (its pods
// list a dead cache and then the cluster DNS), glibc's getent and musl's
// getaddrinfo resolve a name in the zone, a short name the pod's search
// list (or, for autopath, the host search list) expands into it, and a
// name only the DNS resource's upstream resolvers have. The node cache
// used to send every name outside the cluster zones to the host's
// resolvers, and searchexpand its candidates to the `.` block only.
func TestForwardedZonesReachPods(t *testing.T) {
	requireRoot(t)
	requireKubectl(t)
	musl := buildGai(t, "musl-gcc")

	// The host's resolvers (up --upstream): they have none of the names,
	// so an answer from them is a failure.
	host := startZoneServer(t, nil, 0)
	private := startZoneServer(t, map[string]string{
		"www.fwd.test.": "192.0.2.77",
		"api.fwd.test.": "192.0.2.78",
	}, 0)
	upstream := startZoneServer(t, map[string]string{"www.upstream.test.": "192.0.2.88"}, 0)
	hostConf := writeFile(t, "host-resolv.conf", "nameserver 127.0.0.1\nsearch corp.test fwd.test\noptions ndots:1\n")
	dnsAddr, nodeAddr := loopback53(t, 13), loopback53(t, 23)
	u := startUp(t, filepath.Join(t.TempDir(), "data"), nil,
		"--dns-listen", dnsAddr, "--nodecache-listen", nodeAddr, "--upstream", host.Addr, "--upstream-resolv-conf", hostConf)
	k := u.Kubeconfig
	_, upstreamPort, _ := strings.Cut(upstream.Addr, ":")
	mustKubectl(t, k, fmt.Sprintf(`apiVersion: operator.dnsplane.io/v1
kind: DNS
metadata:
  name: default
spec:
  pluginConfig:
    forwardPlugins:
    - domain: fwd.test
      nameServers: [%q]
  upstreamResolvers:
    upstreams:
    - {type: Network, address: 127.0.0.1, port: %s}
`, private.Addr, upstreamPort), "apply", "-f", "-")
	// The cluster DNS serves the new Corefile.
	eventually(t, 30*time.Second, 50*time.Millisecond, func() (bool, string) {
		a, errA := lookupA(u.ClusterDNS, "www.fwd.test.")
		b, errB := lookupA(u.ClusterDNS, "www.upstream.test.")
		return a == "192.0.2.77" && b == "192.0.2.88", fmt.Sprintf("cluster DNS: www.fwd.test %q, %v; www.upstream.test %q, %v", a, errA, b, errB)
	})

	// What `dig @<node cache>` asks: a ClusterFirst or Custom pod's query
	// for a name with enough dots, and any host-network client's.
	t.Run("node cache", func(t *testing.T) {
		for name, want := range map[string]string{"www.fwd.test.": "192.0.2.77", "www.upstream.test.": "192.0.2.88"} {
			if ip, err := lookupA(u.NodeCache, name); err != nil || ip != want {
				t.Errorf("%s @node cache %s: %q, %v; want %s", name, u.NodeCache, ip, err, want)
			}
		}
	})

	ns := newNamespace(t, k)
	c := &agentCluster{upServer: u, Namespace: ns}
	const custom = `  dnsParams:
    custom:
      search: ["$(NAMESPACE).svc.$(CLUSTER)", "fwd.test"]
      options: ["ndots:2"]
`
	pods := map[string]string{"cf": "ClusterFirst", "ap": "ClusterFirstWithAutopath", "custom": "Custom"}
	manifest := func(name, policy, node string) string {
		extra := ""
		if policy == "Custom" {
			extra = custom
		}
		return strings.Replace(podManifest(name, policy, extra), "nodeName: "+upNode, "nodeName: "+node, 1)
	}
	for name, policy := range pods {
		mustKubectl(t, k, manifest(name, policy, upNode), "apply", "-n", ns, "-f", "-")
	}

	// A second node whose node cache is down: nothing listens on its
	// address, so glibc moves on to the cluster DNS at once (docs/autopath.md).
	const downNode = "cache-down"
	stateDir := t.TempDir()
	agent, err := startProcess("dnsplane agent", dnsplaneBin, "agent", "--kubeconfig", k,
		"--node-name", downNode, "--cluster-dns", hostOf(loopback53(t, 43))+","+hostOf(u.ClusterDNS),
		"--cluster-domain", "cluster.local", "--resolv-conf", hostConf, "--pod-cidr", "10.244.202.0/24",
		"--state-dir", stateDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = agent.stop() })
	for name, policy := range pods {
		mustKubectl(t, k, manifest(name+"-down", policy, downNode), "apply", "-n", ns, "-f", "-")
	}
	for name := range pods {
		mustKubectl(t, k, "", "wait", "-n", ns, "--for=condition=Ready", "--timeout=60s", "pod/"+name, "pod/"+name+"-down")
	}

	names := []struct{ name, want string }{
		{"www.fwd.test", "192.0.2.77"},      // in the zone (autopath: the bare-name candidate)
		{"api", "192.0.2.78"},               // the search list's fwd.test (autopath: the host search candidate)
		{"www.upstream.test", "192.0.2.88"}, // the DNS resource's upstream resolvers
	}
	for _, down := range []bool{false, true} {
		for _, resolver := range []string{"glibc", "musl"} {
			for pod, policy := range pods {
				if down {
					pod += "-down"
				}
				t.Run(fmt.Sprintf("%s/%s/%s", pod, policy, resolver), func(t *testing.T) {
					for _, n := range names {
						var got []string
						if down {
							got = resolveOn(t, stateDir, k, ns, pod, resolver, musl, n.name)
						} else {
							got = c.resolve(t, resolver, musl, pod, n.name).addrs
						}
						if !slices.Equal(got, []string{n.want}) {
							t.Errorf("%s in %s (%s): %s = %v, want %s", resolver, pod, policy, n.name, got, n.want)
						}
					}
				})
			}
		}
	}
}

// resolveOn runs resolver ("glibc" or "musl") for name in a pod of another
// node's agent (its state dir), and returns the addresses it printed,
// sorted and unique; nil when it found nothing.
func resolveOn(t *testing.T, stateDir, kubeconfig, ns, pod, resolver, musl, name string) []string {
	t.Helper()
	argv := []string{"getent", "ahosts", name}
	if resolver == "musl" {
		argv = []string{musl, name}
	}
	args := append([]string{"exec", "--kubeconfig", kubeconfig, "--state-dir", stateDir, "-n", ns, pod, "--"}, argv...)
	out, err := exec.CommandContext(ctxFor(t, 60*time.Second), dnsplaneBin, args...).Output()
	if ee, ok := errors.AsType[*exec.ExitError](err); ok && ee.ExitCode() == 2 {
		return nil
	} else if err != nil {
		t.Fatalf("dnsplane %v: %v\n%s", args, err, out)
	}
	var addrs []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) > 0 && !slices.Contains(addrs, f[0]) {
			addrs = append(addrs, f[0])
		}
	}
	slices.Sort(addrs)
	return addrs
}
