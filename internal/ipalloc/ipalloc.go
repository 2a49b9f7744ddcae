// Package ipalloc allocates Service ClusterIPs from a CIDR. Every allocated IP is an etcd
// key (<store prefix>/ranges/serviceips/<ip>, value: the owner) created with a
// create-if-absent transaction, so any number of API server processes can allocate from
// the same range at once and never hand out one IP twice; nothing is cached in memory.
package ipalloc

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"

	"github.com/dnsplane/dnsplane/internal/storage"
)

// Errors of the allocator. Each is matched with errors.Is; the API layer maps
// them to kube-apiserver's responses.
var (
	// ErrFull means every address of the range is allocated.
	ErrFull = errors.New("range is full")
	// ErrAllocated means the requested IP belongs to someone else (see AllocatedError).
	ErrAllocated = errors.New("provided IP is already allocated")
	// ErrNotInRange means the requested IP is outside the range, or is its network or
	// broadcast address.
	ErrNotInRange = errors.New("provided IP is not in the valid range")
)

// AllocatedError is returned by AllocateSpecific when the IP is taken. It matches
// ErrAllocated; Owner lets a caller recognise its own earlier allocation.
type AllocatedError struct {
	IP    net.IP
	Owner string
}

func (e *AllocatedError) Error() string {
	return fmt.Sprintf("IP %s is already allocated to %s", e.IP, e.Owner)
}

// Is makes errors.Is(err, ErrAllocated) true for an *AllocatedError, so callers
// that only care that the IP is taken need not know about Owner.
func (e *AllocatedError) Is(target error) bool { return target == ErrAllocated }

// rangeError words the problem as kube-apiserver does, so the API layer can reuse it.
type rangeError struct {
	ip    string
	cidr  netip.Prefix
	extra string
}

func (e *rangeError) Error() string {
	return fmt.Sprintf("the provided IP (%s) is not in the valid range. The range of valid IPs is %s%s", e.ip, e.cidr, e.extra)
}

func (e *rangeError) Is(target error) bool { return target == ErrNotInRange }

const (
	keyPrefix = "ranges/serviceips/"
	// maxSize caps how many addresses of a huge (IPv6) range Allocate considers; it
	// only keeps offsets in uint64 arithmetic. AllocateSpecific accepts the whole CIDR.
	maxSize = uint64(1) << 62
	// listPage bounds one etcd response while the slow path reads existing allocations.
	listPage = 4096
)

// Allocator hands out IPs from one CIDR.
type Allocator struct {
	store  *storage.Store
	prefix netip.Prefix
	// Allocate picks among size addresses starting at first.
	first netip.Addr
	size  uint64
}

// New returns an allocator for cidr (e.g. "10.96.0.0/12" or "fd00:10:96::/108"). The
// network address is never handed out, nor, for IPv4, the broadcast address.
func New(store *storage.Store, cidr string) (*Allocator, error) {
	p, size, err := parseRange(cidr)
	if err != nil {
		return nil, err
	}
	return &Allocator{store: store, prefix: p, first: p.Addr().Next(), size: size}, nil
}

// CheckRange reports whether New would accept cidr, without storage: for
// checking a configuration before anything starts.
func CheckRange(cidr string) error {
	_, _, err := parseRange(cidr)
	return err
}

// parseRange returns the masked range and how many addresses it hands out.
func parseRange(cidr string) (netip.Prefix, uint64, error) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return netip.Prefix{}, 0, fmt.Errorf("service IP range: %w", err)
	}
	p = p.Masked()
	if p.Addr().Is4In6() {
		return netip.Prefix{}, 0, fmt.Errorf("service IP range %s: IPv4-mapped IPv6 ranges are not supported", cidr)
	}
	hostBits := p.Addr().BitLen() - p.Bits()
	size := uint64(maxSize)
	if hostBits < 63 {
		total := uint64(1) << hostBits
		reserved := uint64(1) // the network address (for IPv6, the subnet-router anycast address)
		if p.Addr().Is4() {
			reserved = 2 // and the broadcast address
		}
		if total <= reserved {
			return netip.Prefix{}, 0, fmt.Errorf("service IP range %s is too small: no usable addresses", cidr)
		}
		size = total - reserved
	}
	return p, size, nil
}

// Range returns the CIDR (a copy; callers may modify it).
func (a *Allocator) Range() *net.IPNet {
	return &net.IPNet{
		IP:   net.IP(a.prefix.Addr().AsSlice()),
		Mask: net.CIDRMask(a.prefix.Bits(), a.prefix.Addr().BitLen()),
	}
}

// Allocate records and returns a free IP for owner (e.g. "services/ns/name").
//
// It tries one random address first, which in a sparse range almost always succeeds in a
// single round trip. If that is taken it reads the existing allocations and walks the
// range from the random start, trying the free addresses in turn; losing a race for one
// (another process took it since the read) just moves on to the next. The walk is
// bounded by the number of allocations, not the range size, so huge IPv6 ranges cost
// no more than small ones.
func (a *Allocator) Allocate(ctx context.Context, owner string) (net.IP, error) {
	if owner == "" {
		return nil, errors.New("allocating an IP: empty owner")
	}
	start := rand.Uint64N(a.size)
	ip := a.at(start)
	err := a.create(ctx, ip, owner)
	if err == nil {
		return net.IP(ip.AsSlice()), nil
	}
	if !errors.Is(err, storage.ErrExists) {
		return nil, err
	}

	taken, err := a.allocated(ctx)
	if err != nil {
		return nil, err
	}
	for i := uint64(0); i < a.size && uint64(len(taken)) < a.size; i++ {
		off := (start + i) % a.size
		if _, ok := taken[off]; ok {
			continue
		}
		ip := a.at(off)
		err := a.create(ctx, ip, owner)
		if err == nil {
			return net.IP(ip.AsSlice()), nil
		}
		if !errors.Is(err, storage.ErrExists) {
			return nil, err
		}
		taken[off] = struct{}{}
	}
	return nil, fmt.Errorf("allocating an IP from %s: %w", a.prefix, ErrFull)
}

// AllocateSpecific records ip for owner if it is in range and free.
func (a *Allocator) AllocateSpecific(ctx context.Context, ip net.IP, owner string) error {
	if owner == "" {
		return errors.New("allocating an IP: empty owner")
	}
	addr, err := a.inRange(ip)
	if err != nil {
		return err
	}
	// A few attempts because the holder may release it between our create and our read.
	for range 3 {
		err := a.create(ctx, addr, owner)
		if err == nil || !errors.Is(err, storage.ErrExists) {
			return err
		}
		kv, err := a.store.Get(ctx, key(addr))
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading the owner of %s: %w", addr, err)
		}
		return &AllocatedError{IP: net.IP(addr.AsSlice()), Owner: string(kv.Value)}
	}
	return fmt.Errorf("allocating %s: it keeps being released and reallocated", addr)
}

// Release frees ip. Releasing a free IP is not an error. Any valid IP is accepted, not
// only those in the current range, so records made under an earlier
// --service-cluster-ip-range are still released when their Service is deleted.
func (a *Allocator) Release(ctx context.Context, ip net.IP) error {
	addr, ok := netip.AddrFromSlice(ip)
	if !ok {
		return fmt.Errorf("releasing IP: invalid address %v", ip)
	}
	addr = addr.Unmap()
	if _, err := a.store.Delete(ctx, key(addr), 0); err != nil && !errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("releasing %s: %w", addr, err)
	}
	return nil
}

func (a *Allocator) inRange(ip net.IP) (netip.Addr, error) {
	addr, ok := netip.AddrFromSlice(ip)
	if !ok {
		return netip.Addr{}, &rangeError{ip: fmt.Sprint(ip), cidr: a.prefix}
	}
	addr = addr.Unmap()
	if !a.prefix.Contains(addr) {
		return netip.Addr{}, &rangeError{ip: addr.String(), cidr: a.prefix}
	}
	if addr == a.prefix.Addr() {
		return netip.Addr{}, &rangeError{ip: addr.String(), cidr: a.prefix, extra: " (excluding its network address)"}
	}
	if addr.Is4() && addr == lastAddr(a.prefix) {
		return netip.Addr{}, &rangeError{ip: addr.String(), cidr: a.prefix, extra: " (excluding its broadcast address)"}
	}
	return addr, nil
}

func (a *Allocator) create(ctx context.Context, ip netip.Addr, owner string) error {
	if _, err := a.store.Create(ctx, key(ip), []byte(owner)); err != nil {
		return fmt.Errorf("allocating %s: %w", ip, err)
	}
	return nil
}

// allocated returns the offsets of every allocated address Allocate could pick. The
// records of other ranges (another IP family, an earlier range) share the key space
// and are skipped.
func (a *Allocator) allocated(ctx context.Context) (map[uint64]struct{}, error) {
	taken := map[uint64]struct{}{}
	opts := storage.ListOptions{Limit: listPage}
	for {
		page, err := a.store.List(ctx, keyPrefix, opts)
		if err != nil {
			return nil, fmt.Errorf("reading allocated IPs: %w", err)
		}
		for _, kv := range page.Items {
			addr, err := netip.ParseAddr(kv.Key[len(keyPrefix):])
			if err != nil {
				continue // not ours to interpret
			}
			if off, ok := a.offset(addr); ok {
				taken[off] = struct{}{}
			}
		}
		if page.Continue == "" {
			return taken, nil
		}
		opts.Continue = page.Continue
	}
}

func key(ip netip.Addr) string { return keyPrefix + ip.String() }

// at returns the address off places after the first usable one.
func (a *Allocator) at(off uint64) netip.Addr {
	b := a.first.As16()
	lo := binary.BigEndian.Uint64(b[8:])
	hi := binary.BigEndian.Uint64(b[:8])
	sum := lo + off
	if sum < lo {
		hi++
	}
	binary.BigEndian.PutUint64(b[8:], sum)
	binary.BigEndian.PutUint64(b[:8], hi)
	addr := netip.AddrFrom16(b)
	if a.first.Is4() {
		return addr.Unmap()
	}
	return addr
}

// offset is the inverse of at; ok is false outside [first, first+size).
func (a *Allocator) offset(addr netip.Addr) (uint64, bool) {
	if addr.Is4() != a.first.Is4() || !a.prefix.Contains(addr) || addr.Less(a.first) {
		return 0, false
	}
	x, f := addr.As16(), a.first.As16()
	xhi, xlo := binary.BigEndian.Uint64(x[:8]), binary.BigEndian.Uint64(x[8:])
	fhi, flo := binary.BigEndian.Uint64(f[:8]), binary.BigEndian.Uint64(f[8:])
	lo := xlo - flo
	hi := xhi - fhi
	if xlo < flo {
		hi--
	}
	if hi != 0 || lo >= a.size {
		return 0, false
	}
	return lo, true
}

// lastAddr is the all-ones host address of p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().As16()
	bits := p.Bits()
	if p.Addr().Is4() {
		bits += 96
	}
	for i := bits; i < 128; i++ {
		b[i/8] |= 1 << (7 - i%8)
	}
	addr := netip.AddrFrom16(b)
	if p.Addr().Is4() {
		return addr.Unmap()
	}
	return addr
}
