//go:build linux

package nodecachenet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/google/nftables"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Node is what Setup put in place, held until Teardown.
type Node struct {
	c    Config
	lock *os.File

	// mu orders Check and Teardown: a Check running from Keep when the
	// command tears down must not put back what Teardown removed.
	mu   sync.Mutex
	done bool
}

// Setup puts the interface, its addresses and the NOTRACK rules in place
// and holds this instance's shared lock until Teardown. It is idempotent:
// an interface of the right type with that name (a crashed instance's, or
// a running instance's during an upgrade) is adopted, and the rules' table
// is replaced in one transaction, so no packet ever sees it half written.
//
// Setup waits (until ctx ends) while another instance is tearing down, so
// that an instance starting as the last one exits never loses its
// interface to that teardown.
func Setup(ctx context.Context, c Config) (*Node, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	lock, err := lockShared(ctx, c)
	if err != nil {
		return nil, err
	}
	n := &Node{c: c, lock: lock}
	if err := n.ensureLink(); err != nil {
		_ = lock.Close()
		return nil, err
	}
	if err := n.ensureRules(); err != nil {
		_ = lock.Close()
		return nil, err
	}
	c.Logger.Info("node cache interface and NOTRACK rules in place", "interface", c.InterfaceName, "addresses", c.Addresses, "table", "inet "+c.Table)
	return n, nil
}

// Check puts back whatever of the interface, its addresses and the rules
// has gone (someone deleted the link, flushed the ruleset), as node-cache
// re-checks its iptables rules and interface every -syncinterval.
func (n *Node) Check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.done {
		return nil
	}
	if err := n.ensureLink(); err != nil {
		return err
	}
	return n.ensureRules()
}

// Keep runs Check every interval until ctx ends or Teardown ran, logging
// failures.
func (n *Node) Keep(ctx context.Context, interval time.Duration) {
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := n.Check(ctx); err != nil && ctx.Err() == nil {
			n.c.Logger.Error("cannot keep the node cache's interface and rules", "err", err)
		}
	}, interval)
}

// Teardown removes the rules and then the interface (in that order:
// removing the interface first black-holes queries the rules still
// steer, kubernetes/dns#690), unless SkipTeardown is set or another
// instance still runs on the node, and releases the lock. It reports
// whether it removed them. Call it after the DNS server stopped.
func (n *Node) Teardown(ctx context.Context) (removed bool, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.done {
		return false, errors.New("node cache network already torn down")
	}
	n.done = true
	defer n.lock.Close()
	if err := ctx.Err(); err != nil {
		return false, err
	}
	log := n.c.Logger
	if n.c.SkipTeardown {
		log.Info("leaving the node cache interface and rules in place (skip teardown)", "interface", n.c.InterfaceName)
		return false, nil
	}
	// Converting our shared lock to an exclusive one without waiting
	// fails while any other instance holds its shared lock. (A failed
	// conversion drops our shared lock: harmless, we are leaving.)
	if err := unix.Flock(int(n.lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			log.Info("another node cache instance runs on this node; leaving the interface and rules in place", "interface", n.c.InterfaceName)
			return false, nil
		}
		return false, fmt.Errorf("locking %s: %w", n.lock.Name(), err)
	}
	if err := deleteTable(n.c); err != nil {
		return false, err
	}
	if err := deleteLink(n.c); err != nil {
		return false, err
	}
	log.Info("removed the node cache interface and NOTRACK rules", "interface", n.c.InterfaceName, "table", "inet "+n.c.Table)
	return true, nil
}

// lockShared opens the instances' lock file and takes a shared lock on
// it, waiting while an exiting instance holds it exclusively (it is
// tearing down). The kernel drops the lock when the process dies, so a
// crashed instance never blocks the next one.
func lockShared(ctx context.Context, c Config) (*os.File, error) {
	if err := os.MkdirAll(c.LockDir, 0o755); err != nil {
		return nil, fmt.Errorf("lock directory: %w", err)
	}
	path := filepath.Join(c.LockDir, c.InterfaceName+".lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock file: %w", err)
	}
	err = wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
		err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB)
		if errors.Is(err, unix.EWOULDBLOCK) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("waiting for the lock on %s (another instance is tearing down): %w", path, err)
	}
	return f, nil
}

// newLink is the interface Setup creates.
func newLink(c Config) netlink.Link {
	attrs := netlink.NewLinkAttrs()
	attrs.Name = c.InterfaceName
	if c.kind == "ifb" {
		return &netlink.Ifb{LinkAttrs: attrs}
	}
	return &netlink.Dummy{LinkAttrs: attrs}
}

// ensureLink creates the interface or adopts the one of that name, brings
// it up and adds the addresses it lacks.
func (n *Node) ensureLink() error {
	c := n.c
	link, err := netlink.LinkByName(c.InterfaceName)
	var notFound netlink.LinkNotFoundError
	switch {
	case errors.As(err, &notFound):
		if err := netlink.LinkAdd(newLink(c)); err != nil {
			if errors.Is(err, unix.EOPNOTSUPP) && c.kind == "dummy" {
				return fmt.Errorf("creating %s interface %s: %w (the kernel has no dummy interface driver: CONFIG_DUMMY, modprobe dummy)", c.kind, c.InterfaceName, err)
			}
			if !errors.Is(err, unix.EEXIST) { // another instance won the race
				return fmt.Errorf("creating %s interface %s: %w", c.kind, c.InterfaceName, err)
			}
		} else {
			c.Logger.Info("created interface", "interface", c.InterfaceName, "type", c.kind)
		}
		if link, err = netlink.LinkByName(c.InterfaceName); err != nil {
			return fmt.Errorf("interface %s: %w", c.InterfaceName, err)
		}
	case err != nil:
		return fmt.Errorf("interface %s: %w", c.InterfaceName, err)
	}
	if link.Type() != c.kind {
		return fmt.Errorf("interface %s exists and is of type %s, not %s: refusing to take it over", c.InterfaceName, link.Type(), c.kind)
	}
	if link.Attrs().Alias != linkAlias {
		if err := netlink.LinkSetAlias(link, linkAlias); err != nil {
			return fmt.Errorf("naming interface %s: %w", c.InterfaceName, err)
		}
	}
	if link.Attrs().Flags&net.FlagUp == 0 {
		if err := netlink.LinkSetUp(link); err != nil {
			return fmt.Errorf("bringing interface %s up: %w", c.InterfaceName, err)
		}
	}
	have, err := netlink.AddrList(link, netlink.FAMILY_ALL)
	if err != nil && !errors.Is(err, netlink.ErrDumpInterrupted) {
		return fmt.Errorf("addresses of %s: %w", c.InterfaceName, err)
	}
	for _, a := range c.Addresses {
		if slices.ContainsFunc(have, func(h netlink.Addr) bool { return h.IP.Equal(a.AsSlice()) }) {
			continue
		}
		bits := a.BitLen()
		addr := &netlink.Addr{IPNet: &net.IPNet{IP: a.AsSlice(), Mask: net.CIDRMask(bits, bits)}}
		if a.Is6() {
			// A link-local listen address must not wait for duplicate
			// address detection before the server can bind it.
			addr.Flags = unix.IFA_F_NODAD
		}
		if err := netlink.AddrReplace(link, addr); err != nil {
			return fmt.Errorf("adding %s to %s: %w", a, c.InterfaceName, err)
		}
	}
	return nil
}

// deleteLink removes the interface, if it is there and of our type.
func deleteLink(c Config) error {
	link, err := netlink.LinkByName(c.InterfaceName)
	var notFound netlink.LinkNotFoundError
	if errors.As(err, &notFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("interface %s: %w", c.InterfaceName, err)
	}
	if link.Type() != c.kind {
		return fmt.Errorf("interface %s is of type %s, not %s: leaving it", c.InterfaceName, link.Type(), c.kind)
	}
	if err := netlink.LinkDel(link); err != nil && !errors.Is(err, unix.ENODEV) {
		return fmt.Errorf("deleting interface %s: %w", c.InterfaceName, err)
	}
	return nil
}

// ensureRules writes the table unless it already holds exactly our
// chains and rules.
func (n *Node) ensureRules() error {
	conn, err := nftables.New()
	if err != nil {
		return fmt.Errorf("nftables: %w", err)
	}
	if ok, err := rulesInPlace(conn, n.c); err != nil || ok {
		return err
	}
	// Create the table if missing, then delete and rebuild it, all in one
	// transaction: the kernel applies the batch atomically.
	t := tableOf(n.c)
	conn.AddTable(t)
	conn.DelTable(t)
	conn.AddTable(t)
	chains := chainsOf(t)
	for _, name := range []string{chainPrerouting, chainOutput} {
		conn.AddChain(chains[name])
	}
	for _, r := range ruleSpecs(n.c) {
		conn.AddRule(&nftables.Rule{Table: t, Chain: chains[r.chain], Exprs: r.exprs(), UserData: comment})
	}
	if err := conn.Flush(); err != nil {
		return fmt.Errorf("writing nftables table inet %s: %w", n.c.Table, err)
	}
	return nil
}

// rulesInPlace reports whether the table holds our two chains with as
// many rules as we write. A changed rule is put back on the next Check
// only if it changed the count: the table is ours alone, and this catches
// what happens in practice (a flushed ruleset, a deleted table).
func rulesInPlace(conn *nftables.Conn, c Config) (bool, error) {
	t, err := conn.ListTableOfFamily(c.Table, nftables.TableFamilyINet)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return false, nil
		}
		return false, fmt.Errorf("listing nftables table inet %s: %w", c.Table, err)
	}
	want := map[string]int{}
	for _, r := range ruleSpecs(c) {
		want[r.chain]++
	}
	for name, ch := range chainsOf(t) {
		got, err := conn.ListChain(t, name)
		if err != nil {
			return false, nil
		}
		if got.Hooknum == nil || *got.Hooknum != *ch.Hooknum || got.Priority == nil || *got.Priority != *ch.Priority {
			return false, nil
		}
		rules, err := conn.GetRules(t, got)
		if err != nil {
			return false, fmt.Errorf("listing rules of inet %s %s: %w", c.Table, name, err)
		}
		if len(rules) != want[name] {
			return false, nil
		}
	}
	return true, nil
}

// deleteTable removes the table, if it is there.
func deleteTable(c Config) error {
	conn, err := nftables.New()
	if err != nil {
		return fmt.Errorf("nftables: %w", err)
	}
	conn.DelTable(tableOf(c))
	if err := conn.Flush(); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("deleting nftables table inet %s: %w", c.Table, err)
	}
	return nil
}
