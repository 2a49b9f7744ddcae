package dnsroles

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"syscall"

	"github.com/dnsplane/dnsplane/internal/coredns"
	"github.com/dnsplane/dnsplane/internal/portowner"
)

// Where `up` listens. Pods' resolv.conf files name the node cache and the
// cluster DNS by address only (glibc and musl always ask port 53), so every
// address `up` picks by itself is on port 53: when a default address is
// held by another process (another `up`, a stub resolver), the server moves
// to the next loopback address of a short fixed range on port 53 (Linux
// routes all of 127.0.0.0/8 to lo) instead of to another port. An address
// the user gave is never moved: its flag is the way to move it. Without the
// privilege for port 53 no address of the range works either, so `up`
// refuses to start and says how to get it (docs/operations.md, "Where up
// serves DNS").

// MoveRange is how many consecutive addresses, the default first, a
// default DNS address may move through: 127.0.10.10:53 to 127.0.10.19:53.
// Small, so that the address is predictable; enough for a few `up`s side
// by side.
const MoveRange = 10

// probeFunc binds addr (UDP and TCP) without SO_REUSEPORT and releases it:
// coredns.CanListen. Tests inject their own.
type probeFunc func(addr string) error

// heldError is an address in use (EADDRINUSE) with the processes that
// hold it, as far as /proc tells (best effort: another user's process
// shows only to root).
type heldError struct {
	err error
	who string // portowner.Describe
}

func (h *heldError) Error() string { return h.err.Error() }
func (h *heldError) Unwrap() error { return h.err }

// probeNamingHolder is coredns.CanListen whose EADDRINUSE says who holds
// the address (a *heldError).
func probeNamingHolder(addr string) error {
	err := coredns.CanListen(addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		if who := portowner.Describe(addr, "udp", "tcp"); who != "" {
			return &heldError{err: err, who: who}
		}
	}
	return err
}

// moveCandidates are the addresses a default address may move to, in
// order: addr itself and the next MoveRange-1 addresses, same port, while
// they stay in addr's /24 (so 127.0.10.10 never wraps to another range).
func moveCandidates(addr string) []string {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return nil
	}
	out := []string{addr}
	ip := ap.Addr()
	for len(out) < MoveRange {
		next := ip.Next()
		if !next.IsValid() || !netip.PrefixFrom(ap.Addr(), 24).Masked().Contains(next) {
			break
		}
		ip = next
		out = append(out, netip.AddrPortFrom(ip, ap.Port()).String())
	}
	return out
}

// listenChoice is one DNS server's address to settle.
type listenChoice struct {
	role string // "cluster DNS", "node cache"
	flag string // the flag that sets it
	addr string
	// movable: addr is up's default, not the user's.
	movable bool
	// avoid are addresses already chosen for the other servers.
	avoid []string
}

// choose returns the address the server will listen on: c.addr when it can
// be bound; for a default, the first of its range that can be; otherwise an
// error naming the flag(s) that fix it.
func (c listenChoice) choose(probe probeFunc) (string, error) {
	if !c.movable {
		if err := probe(c.addr); err != nil {
			return "", c.refuse(c.addr, err)
		}
		return c.addr, nil
	}
	cands := moveCandidates(c.addr)
	for _, a := range cands {
		if slices.Contains(c.avoid, a) {
			continue
		}
		err := probe(a)
		if err == nil {
			return a, nil
		}
		if !errors.Is(err, syscall.EADDRINUSE) {
			return "", c.refuse(a, err)
		}
	}
	return "", fmt.Errorf("%s: %s to %s are all taken by other processes (another dnsplane up, or a DNS server on all addresses); "+
		"give %s a free address on port 53 (pods' resolvers ask port 53 only)", c.role, cands[0], cands[len(cands)-1], c.flag)
}

// refuse is the error for an address that cannot be bound.
func (c listenChoice) refuse(addr string, err error) error {
	switch {
	case errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM):
		port := "53"
		if ap, perr := netip.ParseAddrPort(addr); perr == nil {
			port = fmt.Sprint(ap.Port())
		}
		return fmt.Errorf("%s: cannot listen on %s: port %s needs root or CAP_NET_BIND_SERVICE, and pods' resolv.conf files "+
			"can name no port but 53: run up as root (sudo), or give the binary the capability "+
			"(setcap cap_net_bind_service=+ep dnsplane), or choose --dns-listen and --nodecache-listen yourself "+
			"(on a port other than 53 only dig and kubectl can use them, pods cannot resolve): %w", c.role, addr, port, err)
	case errors.Is(err, syscall.EADDRINUSE):
		hint := c.flag + " picks another address"
		if c.flag == "--nodecache-listen" {
			hint += `, "" turns it off`
		}
		if h, ok := errors.AsType[*heldError](err); ok {
			hint = h.who + "; " + hint
		}
		return fmt.Errorf("%s: %s is already served by another process (%s)", c.role, addr, hint)
	default:
		return fmt.Errorf("%s: %s %s: %w", c.role, c.flag, addr, err)
	}
}

// ChooseAddresses settles where the cluster DNS and the node cache listen,
// before anything starts and after the flags are validated: it probes
// their addresses, moves a default one that another process holds to the
// next free address of its range (and says so in one log line and the
// banner), and refuses an address that cannot be bound with an error
// naming the flag. Call it once, before RenderOptions and Components.
func (r *Roles) ChooseAddresses(logger *slog.Logger) error {
	return r.chooseAddresses(logger, r.probe)
}

func (r *Roles) chooseAddresses(logger *slog.Logger, probe probeFunc) error {
	d := &r.cfg
	listen, err := listenChoice{role: "cluster DNS", flag: "--dns-listen", addr: d.Listen, movable: d.ListenDefault}.choose(probe)
	if err != nil {
		return err
	}
	var moves []any
	if listen != d.Listen {
		r.moved[listen] = d.Listen
		moves = append(moves, "cluster-dns", listen, "cluster-dns-held", d.Listen)
		d.Listen = listen
	}
	// Node cache i moves through the addresses after its own planned one,
	// skipping those the cluster DNS and the nodes before it took.
	avoid := []string{d.Listen}
	for i, planned := range r.nodeListen {
		role, key := "node cache", "nodecache"
		if node := d.nodeName(i); node != "" {
			role, key = "node cache of "+node, "nodecache-"+node
		}
		nc, err := listenChoice{role: role, flag: "--nodecache-listen", addr: planned, movable: d.NodeCacheDefault,
			avoid: avoid}.choose(probe)
		if err != nil {
			return err
		}
		if nc != planned {
			r.moved[nc] = planned
			moves = append(moves, key, nc, key+"-held", planned)
			r.nodeListen[i] = nc
			if i == 0 {
				d.NodeCacheListen = nc
			}
		}
		avoid = append(avoid, nc)
	}
	if err := checkMetricsAddr(d.NodeCacheMetrics, len(r.nodeListen) > 0); err != nil {
		return err
	}
	if len(moves) > 0 && logger != nil {
		logger.Warn("a default DNS address is held by another process; serving on the next free one on port 53, which pods' resolv.conf files name",
			moves...)
	}
	return nil
}

// bannerNote is what the banner adds after a DNS server's address: why it
// is not the default, or that pods cannot use it.
func (r *Roles) bannerNote(addr string) string {
	if from, ok := r.moved[addr]; ok {
		return fmt.Sprintf(" (%s is held by another process)", from)
	}
	if ap, err := netip.ParseAddrPort(addr); err == nil && ap.Port() != 53 {
		return " (not port 53: pods' resolvers cannot reach it)"
	}
	return ""
}

// checkMetricsAddr binds the node cache's metrics address once, when there
// is a node cache: CoreDNS's prometheus plugin only logs a port it cannot
// bind and serves on without metrics, which a user asking for them with
// --nodecache-metrics would not notice.
func checkMetricsAddr(addr string, nodeCache bool) error {
	if addr == "" || !nodeCache {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		who := portowner.Parenthesized(addr, "tcp")
		return fmt.Errorf("node cache metrics: %s is already in use by another process%s; choose another address with --nodecache-metrics, or leave it out", addr, who)
	case err != nil:
		return fmt.Errorf("node cache metrics: --nodecache-metrics %s: %w", addr, err)
	}
	return ln.Close()
}
