// Package podip hands out pod IPs from the node's --pod-cidr, as a CNI
// plugin's host-local IPAM does for kubelet: the network address, the
// gateway (the first host address, .1) and, for IPv4, the broadcast address
// (host-local's default rangeEnd stops before it) are never handed out, an IP belongs to
// one pod UID at a time, and an agent restart rebuilds the table from the
// pods' status.podIP (Reserve) before allocating anything new.
//
// An Allocator is not safe for concurrent use; the agent calls it from its
// single worker.
package podip

import (
	"errors"
	"fmt"
	"math/big"
	"net/netip"

	"k8s.io/apimachinery/pkg/types"
)

var (
	// ErrFull means every usable address of the range is held by a pod.
	// The text is host-local IPAM's, which kubelet's event carries when a
	// CNI network runs out (containernetworking/plugins, allocator.go).
	ErrFull = errors.New("no IP addresses available in range set")
	// ErrNotInRange means the address is outside the range or is its network
	// address or gateway.
	ErrNotInRange = errors.New("address is not a usable address of the pod CIDR")
	// ErrTaken means another pod holds the address.
	ErrTaken = errors.New("address is held by another pod")
)

// maxTracked bounds Capacity for huge (IPv6) ranges; a node runs far fewer pods.
const maxTracked = 1 << 20

// Allocator is the table of addresses of one CIDR.
type Allocator struct {
	prefix netip.Prefix
	first  netip.Addr // first usable address (network + 2)
	byIP   map[netip.Addr]types.UID
	byUID  map[types.UID]netip.Addr
	last   netip.Addr // last usable address
	next   netip.Addr // where the next search starts, so a released IP is not reused at once
	size   int        // usable addresses, at most maxTracked
}

// New parses cidr (e.g. 10.244.0.0/24) and returns an empty table. The range
// must have at least one usable address besides the network and gateway.
func New(cidr string) (*Allocator, error) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return nil, err
	}
	if p != p.Masked() {
		return nil, fmt.Errorf("%s is not a network address (did you mean %s?)", cidr, p.Masked())
	}
	hostBits := p.Addr().BitLen() - p.Bits()
	total := new(big.Int).Lsh(big.NewInt(1), uint(hostBits))
	reserved := int64(2) // network address, gateway
	if p.Addr().Is4() {
		reserved++ // broadcast
	}
	usable := total.Sub(total, big.NewInt(reserved))
	if usable.Sign() <= 0 {
		return nil, fmt.Errorf("%s has no address left after the network, gateway and broadcast addresses", cidr)
	}
	size := maxTracked
	if usable.IsInt64() && usable.Int64() < maxTracked {
		size = int(usable.Int64())
	}
	first := p.Addr().Next().Next()
	last := first
	for i := 1; i < size; i++ {
		last = last.Next()
	}
	return &Allocator{
		prefix: p, first: first, last: last, next: first, size: size,
		byIP: map[netip.Addr]types.UID{}, byUID: map[types.UID]netip.Addr{},
	}, nil
}

// Prefix is the range.
func (a *Allocator) Prefix() netip.Prefix { return a.prefix }

// Capacity is the number of usable addresses (the range minus network,
// gateway and IPv4 broadcast addresses), capped at 2^20 for huge ranges: the node's pod
// capacity.
func (a *Allocator) Capacity() int { return a.size }

// Used is the number of addresses held.
func (a *Allocator) Used() int { return len(a.byIP) }

// Get returns the address uid holds.
func (a *Allocator) Get(uid types.UID) (netip.Addr, bool) {
	ip, ok := a.byUID[uid]
	return ip, ok
}

func (a *Allocator) usable(ip netip.Addr) bool {
	if !a.prefix.Contains(ip) {
		return false
	}
	return ip.Compare(a.first) >= 0 && ip.Compare(a.last) <= 0
}

// Reserve records that uid holds ip (an address read back from the pod's
// status). Reserving the address uid already holds is a no-op; a uid that
// holds another address moves to ip.
func (a *Allocator) Reserve(uid types.UID, ip netip.Addr) error {
	ip = ip.Unmap()
	if !a.usable(ip) {
		return fmt.Errorf("%s (%s): %w", ip, a.prefix, ErrNotInRange)
	}
	if owner, ok := a.byIP[ip]; ok {
		if owner == uid {
			return nil
		}
		return fmt.Errorf("%s: %w (pod UID %s)", ip, ErrTaken, owner)
	}
	a.Release(uid)
	a.byIP[ip] = uid
	a.byUID[uid] = ip
	return nil
}

// Allocate returns the address uid holds, or gives it the next free one.
func (a *Allocator) Allocate(uid types.UID) (netip.Addr, error) {
	if ip, ok := a.byUID[uid]; ok {
		return ip, nil
	}
	if len(a.byIP) >= a.size {
		return netip.Addr{}, a.errFull()
	}
	ip := a.next
	for i := 0; i < a.size; i++ {
		if !a.usable(ip) {
			ip = a.first
		}
		if _, taken := a.byIP[ip]; !taken {
			a.byIP[ip] = uid
			a.byUID[uid] = ip
			a.next = ip.Next()
			return ip, nil
		}
		ip = ip.Next()
	}
	return netip.Addr{}, a.errFull()
}

// errFull is host-local's error, naming the range as it does (first-last).
func (a *Allocator) errFull() error {
	return fmt.Errorf("%w: %s-%s", ErrFull, a.first, a.last)
}

// Release gives back the address uid holds, if any.
func (a *Allocator) Release(uid types.UID) {
	if ip, ok := a.byUID[uid]; ok {
		delete(a.byUID, uid)
		delete(a.byIP, ip)
	}
}
