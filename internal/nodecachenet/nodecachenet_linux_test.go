//go:build linux

package nodecachenet

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/google/nftables/userdata"
	"github.com/miekg/dns"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/dnsplane/dnsplane/internal/coredns"
)

// netnsEnv names, in the child test binary, the test it runs inside a new
// network namespace.
const netnsEnv = "DNSPLANE_NODECACHENET_NETNS_TEST"

// inNetNS runs the calling top-level test again in a child test binary in
// a network namespace of its own (CLONE_NEWNET: every thread of the child,
// so CoreDNS's listeners land there too) and returns false, the parent's
// cue to return; in the child it brings lo up and returns true. The
// interface, the rules and port 53 of the child's namespace are its own,
// so these tests run in parallel and never touch the host's network.
func inNetNS(t *testing.T) bool {
	t.Helper()
	if os.Getenv(netnsEnv) == t.Name() {
		lo, err := netlink.LinkByName("lo")
		if err != nil {
			t.Fatal(err)
		}
		if err := netlink.LinkSetUp(lo); err != nil {
			t.Fatal(err)
		}
		return true
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates an interface and nftables rules in a network namespace of its own")
	}
	t.Parallel()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run", "^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), netnsEnv+"="+t.Name())
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err != nil && !errors.As(err, &exit):
		// The clone itself failed: a kernel without network namespaces
		// (CONFIG_NET_NS) or a sandbox that forbids them.
		t.Skipf("no network namespace support (clone with CLONE_NEWNET: %v)", err)
	case err != nil:
		t.Fatalf("in a network namespace of its own: %v\n%s", err, out)
	case bytes.Contains(out, []byte("--- SKIP")):
		t.Skipf("skipped in the network namespace:\n%s", out)
	}
	t.Logf("in a network namespace of its own:\n%s", out)
	return false
}

// testConfig is a Config for one test: a lock directory of its own and,
// on kernels built without the dummy driver (CONFIG_DUMMY), an ifb
// interface, which holds local addresses alike.
func testConfig(t *testing.T) Config {
	t.Helper()
	kind := "dummy"
	probe := &netlink.Dummy{LinkAttrs: netlink.LinkAttrs{Name: "probe0"}}
	if err := netlink.LinkAdd(probe); err != nil {
		if !errors.Is(err, unix.EOPNOTSUPP) {
			t.Fatalf("probing for the dummy driver: %v", err)
		}
		t.Log("the kernel has no dummy interface driver: testing with an ifb interface")
		kind = "ifb"
	} else if err := netlink.LinkDel(probe); err != nil {
		t.Fatal(err)
	}
	return Config{
		Addresses: []netip.Addr{DefaultAddress},
		LockDir:   t.TempDir(),
		Logger:    slog.New(slog.NewTextHandler(t.Output(), nil)),
		kind:      kind,
	}
}

// requireInPlace checks the interface (type, up, alias, addresses) and
// the table (two raw-priority chains, one NOTRACK rule per spec).
func requireInPlace(t *testing.T, c Config) netlink.Link {
	t.Helper()
	c, err := c.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	link, err := netlink.LinkByName(c.InterfaceName)
	if err != nil {
		t.Fatalf("interface %s: %v", c.InterfaceName, err)
	}
	if link.Type() != c.kind || link.Attrs().Flags&net.FlagUp == 0 || link.Attrs().Alias != linkAlias {
		t.Errorf("interface %s: type %s, flags %v, alias %q; want %s, up, %q", c.InterfaceName, link.Type(), link.Attrs().Flags, link.Attrs().Alias, c.kind, linkAlias)
	}
	addrs, err := netlink.AddrList(link, netlink.FAMILY_ALL)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range c.Addresses {
		if !slices.ContainsFunc(addrs, func(h netlink.Addr) bool {
			ones, _ := h.Mask.Size()
			return h.IP.Equal(a.AsSlice()) && ones == a.BitLen()
		}) {
			t.Errorf("interface %s lacks %s/%d: %v", c.InterfaceName, a, a.BitLen(), addrs)
		}
	}

	conn, err := nftables.New()
	if err != nil {
		t.Fatal(err)
	}
	tab, err := conn.ListTableOfFamily(c.Table, nftables.TableFamilyINet)
	if err != nil {
		t.Fatalf("table inet %s: %v", c.Table, err)
	}
	var rules []*nftables.Rule
	for _, name := range []string{chainPrerouting, chainOutput} {
		ch, err := conn.ListChain(tab, name)
		if err != nil {
			t.Fatalf("chain %s: %v", name, err)
		}
		if *ch.Priority != *nftables.ChainPriorityRaw || ch.Type != nftables.ChainTypeFilter {
			t.Errorf("chain %s: priority %d, type %s; want raw (-300), filter", name, *ch.Priority, ch.Type)
		}
		rs, err := conn.GetRules(tab, ch)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, rs...)
	}
	specs := ruleSpecs(c)
	if len(rules) != len(specs) {
		t.Fatalf("%d rules, want %d", len(rules), len(specs))
	}
	for _, r := range rules {
		if !slices.ContainsFunc(r.Exprs, func(e expr.Any) bool { _, ok := e.(*expr.Notrack); return ok }) {
			t.Errorf("rule %d in %s has no notrack: %#v", r.Handle, r.Chain.Name, r.Exprs)
		}
		if got, _ := userdata.GetString(r.UserData, userdata.TypeComment); got != ruleComment {
			t.Errorf("rule %d comment %q, want %q", r.Handle, got, ruleComment)
		}
	}
	return link
}

// requireGone checks that neither the interface nor the table exists.
func requireGone(t *testing.T, c Config) {
	t.Helper()
	c, _ = c.withDefaults()
	if _, err := netlink.LinkByName(c.InterfaceName); err == nil {
		t.Errorf("interface %s still exists", c.InterfaceName)
	}
	conn, err := nftables.New()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ListTableOfFamily(c.Table, nftables.TableFamilyINet); !errors.Is(err, unix.ENOENT) {
		t.Errorf("table inet %s: %v, want it gone", c.Table, err)
	}
}

// enableConntrack makes the namespace track connections, as any node
// running kube-proxy does: a rule reading the conntrack state registers
// conntrack's hooks (nft_ct). The rule itself accepts everything.
func enableConntrack(t *testing.T) {
	t.Helper()
	conn, err := nftables.New()
	if err != nil {
		t.Fatal(err)
	}
	tab := conn.AddTable(&nftables.Table{Name: "probe", Family: nftables.TableFamilyINet})
	ch := conn.AddChain(&nftables.Chain{Name: "input", Table: tab, Type: nftables.ChainTypeFilter, Hooknum: nftables.ChainHookInput, Priority: nftables.ChainPriorityFilter})
	conn.AddRule(&nftables.Rule{Table: tab, Chain: ch, Exprs: []expr.Any{&expr.Ct{Register: 1, Key: expr.CtKeySTATE}, &expr.Counter{}}})
	if err := conn.Flush(); err != nil {
		t.Fatalf("enabling conntrack: %v", err)
	}
}

// conntracked reports whether the namespace's conntrack table holds an
// entry for UDP to dst port 53.
func conntracked(t *testing.T, dst string) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/net/nf_conntrack")
	if err != nil {
		t.Fatalf("conntrack table: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, " udp ") && strings.Contains(l, "dst="+dst+" ") && strings.Contains(l, "dport=53 ") {
			return true
		}
	}
	return false
}

// answer asks server for example.org A and returns the address answered.
func answer(t *testing.T, server string) string {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion("example.org.", dns.TypeA)
	c := &dns.Client{Net: "udp", Timeout: 2 * time.Second}
	r, _, err := c.Exchange(m, server)
	if err != nil {
		t.Fatalf("query to %s: %v", server, err)
	}
	if len(r.Answer) != 1 {
		t.Fatalf("query to %s: %v", server, r)
	}
	return r.Answer[0].(*dns.A).A.String()
}

// serverCorefile answers example.org A with 192.0.2.1 on 169.254.20.10:53
// and 127.0.0.1:53 (the address without NOTRACK rules, the control).
const serverCorefile = `.:53 {
    bind 169.254.20.10 127.0.0.1
    template IN A example.org {
        answer "{{ .Name }} 60 IN A 192.0.2.1"
    }
}
`

// dualStackCorefile is serverCorefile on IPv6 addresses too: fd00::10
// (the node cache's) and ::1 (the control).
const dualStackCorefile = `.:53 {
    bind 169.254.20.10 127.0.0.1 fd00::10 ::1
    template IN A example.org {
        answer "{{ .Name }} 60 IN A 192.0.2.1"
    }
}
`

func TestSetupServeTeardown(t *testing.T) {
	if !inNetNS(t) {
		return
	}
	ctx := t.Context()
	c := testConfig(t)
	c.Addresses = append(c.Addresses, netip.MustParseAddr("fd00::10"))
	enableConntrack(t)
	n, err := Setup(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	requireInPlace(t, c)

	srv, err := coredns.Start(ctx, dualStackCorefile, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Each control shows conntrack runs here; the node cache's addresses
	// must stay out of it.
	for _, tc := range []struct{ cache, control, cacheTracked, controlTracked string }{
		{"169.254.20.10:53", "127.0.0.1:53", "169.254.20.10", "127.0.0.1"},
		// /proc/net/nf_conntrack writes IPv6 addresses in full.
		{"[fd00::10]:53", "[::1]:53", "fd00:0000:0000:0000:0000:0000:0000:0010", "0000:0000:0000:0000:0000:0000:0000:0001"},
	} {
		for _, server := range []string{tc.cache, tc.control} {
			if got := answer(t, server); got != "192.0.2.1" {
				t.Errorf("answer through %s: %s", server, got)
			}
		}
		if !conntracked(t, tc.controlTracked) {
			t.Errorf("no conntrack entry for the query to %s: conntrack is not running, the next check proves nothing", tc.control)
		}
		if conntracked(t, tc.cacheTracked) {
			t.Errorf("the query to %s was tracked by conntrack: the NOTRACK rules do not apply", tc.cache)
		}
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}

	removed, err := n.Teardown(ctx)
	if err != nil || !removed {
		t.Fatalf("Teardown: removed %v, err %v; want removed", removed, err)
	}
	requireGone(t, c)
	// A Check from Keep that runs after the teardown puts nothing back.
	if err := n.Check(ctx); err != nil {
		t.Fatal(err)
	}
	requireGone(t, c)
}

func TestSetupAdoptsLeftover(t *testing.T) {
	if !inNetNS(t) {
		return
	}
	ctx := t.Context()
	c := testConfig(t)
	crashed, err := Setup(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	// A crash: the process dies, the kernel drops its lock, the interface
	// and table stay. Leave them worse than it did: the link down, the
	// address gone, a stray rule in the table.
	_ = crashed.lock.Close()
	link := requireInPlace(t, c)
	if err := netlink.LinkSetDown(link); err != nil {
		t.Fatal(err)
	}
	if err := netlink.AddrDel(link, &netlink.Addr{IPNet: &net.IPNet{IP: DefaultAddress.AsSlice(), Mask: net.CIDRMask(32, 32)}}); err != nil {
		t.Fatal(err)
	}
	conn, err := nftables.New()
	if err != nil {
		t.Fatal(err)
	}
	tab := tableOf(crashed.c)
	conn.AddRule(&nftables.Rule{Table: tab, Chain: chainsOf(tab)[chainOutput], Exprs: []expr.Any{&expr.Counter{}}})
	if err := conn.Flush(); err != nil {
		t.Fatal(err)
	}

	n, err := Setup(ctx, c)
	if err != nil {
		t.Fatalf("Setup over a leftover: %v", err)
	}
	if got := requireInPlace(t, c); got.Attrs().Index != link.Attrs().Index {
		t.Errorf("interface index %d, want the leftover's %d (adopted, not recreated)", got.Attrs().Index, link.Attrs().Index)
	}
	// Setup again over its own state changes nothing.
	again, err := Setup(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	requireInPlace(t, c)
	if removed, err := again.Teardown(ctx); err != nil || removed {
		t.Fatalf("Teardown with another instance running: removed %v, err %v", removed, err)
	}
	if removed, err := n.Teardown(ctx); err != nil || !removed {
		t.Fatalf("Teardown: removed %v, err %v; want removed", removed, err)
	}
	requireGone(t, c)
}

func TestSetupRefusesForeignInterface(t *testing.T) {
	if !inNetNS(t) {
		return
	}
	c := testConfig(t)
	c.InterfaceName = "foreign0"
	if err := netlink.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: c.InterfaceName}}); err != nil {
		t.Fatal(err)
	}
	_, err := Setup(t.Context(), c)
	if err == nil || !strings.Contains(err.Error(), "refusing to take it over") {
		t.Fatalf("Setup over a bridge of that name: %v, want refused", err)
	}
	if l, err := netlink.LinkByName(c.InterfaceName); err != nil || l.Type() != "bridge" {
		t.Fatalf("the bridge: %v, %v", l, err)
	}
}

// TestTwoInstances is a rolling update with maxSurge 1: the new instance
// starts next to the old one, both serving the address through
// SO_REUSEPORT; the old one exits and must leave the interface and rules
// to the new one, which removes them when it exits last.
func TestTwoInstances(t *testing.T) {
	if !inNetNS(t) {
		return
	}
	ctx := t.Context()
	c := testConfig(t)
	old, err := Setup(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	oldSrv, err := coredns.StartShared(ctx, serverCorefile, nil)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := Setup(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	curSrv, err := coredns.StartShared(ctx, serverCorefile, nil)
	if err != nil {
		t.Fatalf("second server on the same address: %v", err)
	}

	if err := oldSrv.Stop(); err != nil {
		t.Fatal(err)
	}
	if removed, err := old.Teardown(ctx); err != nil || removed {
		t.Fatalf("old instance's Teardown: removed %v, err %v; want left in place", removed, err)
	}
	requireInPlace(t, c)
	if got := answer(t, "169.254.20.10:53"); got != "192.0.2.1" {
		t.Errorf("answer after the old instance left: %s", got)
	}

	if err := curSrv.Stop(); err != nil {
		t.Fatal(err)
	}
	if removed, err := cur.Teardown(ctx); err != nil || !removed {
		t.Fatalf("last instance's Teardown: removed %v, err %v; want removed", removed, err)
	}
	requireGone(t, c)
}

func TestSkipTeardownAndCheck(t *testing.T) {
	if !inNetNS(t) {
		return
	}
	ctx := t.Context()
	c := testConfig(t)
	c.SkipTeardown = true
	n, err := Setup(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	// Someone flushes the ruleset and deletes the interface: Check puts
	// both back.
	conn, err := nftables.New()
	if err != nil {
		t.Fatal(err)
	}
	conn.FlushRuleset()
	if err := conn.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := deleteLink(n.c); err != nil {
		t.Fatal(err)
	}
	if err := n.Check(ctx); err != nil {
		t.Fatal(err)
	}
	requireInPlace(t, c)
	if removed, err := n.Teardown(ctx); err != nil || removed {
		t.Fatalf("Teardown with SkipTeardown: removed %v, err %v", removed, err)
	}
	requireInPlace(t, c)
}

// TestSetupWaitsForTeardown: an instance starting while the last one
// tears down waits for the teardown, then puts everything back.
func TestSetupWaitsForTeardown(t *testing.T) {
	if !inNetNS(t) {
		return
	}
	ctx := t.Context()
	c := testConfig(t)
	c, _ = c.withDefaults()
	// The exiting instance's exclusive lock, held as Teardown holds it.
	f, err := os.OpenFile(c.LockDir+"/"+c.InterfaceName+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := Setup(short, c); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Setup while another instance tears down: %v, want it to wait", err)
	}
	_ = f.Close()
	n, err := Setup(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	requireInPlace(t, c)
	if _, err := n.Teardown(ctx); err != nil {
		t.Fatal(err)
	}
}
