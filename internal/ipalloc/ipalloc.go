// Package ipalloc allocates Service ClusterIPs from a CIDR. Every allocated IP is an etcd
// key (<store prefix>/ranges/serviceips/<ip>, value: the owner) that internal/rangealloc
// creates with a create-if-absent transaction, so any number of API server processes can
// allocate from the same range at once and never hand out one IP twice.
package ipalloc

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/dnsplane/dnsplane/internal/rangealloc"
	"github.com/dnsplane/dnsplane/internal/storage"
)

// Errors of the allocator. Each is matched with errors.Is; the API layer maps
// them to kube-apiserver's responses.
var (
	// ErrFull means every address of the range is allocated.
	ErrFull = rangealloc.ErrFull
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
)

// Allocator hands out IPs from one CIDR.
type Allocator struct {
	slots  *rangealloc.Allocator
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
	a := &Allocator{prefix: p, first: p.Addr().Next(), size: size}
	a.slots = rangealloc.New(store, keyPrefix, space{a})
	return a, nil
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

// Allocate records and returns a free IP for owner (e.g. "services/ns/name"), as
// rangealloc.Allocator.Allocate picks it.
func (a *Allocator) Allocate(ctx context.Context, owner string) (net.IP, error) {
	off, err := a.slots.Allocate(ctx, owner)
	if errors.Is(err, rangealloc.ErrFull) {
		return nil, fmt.Errorf("allocating an IP from %s: %w", a.prefix, ErrFull)
	}
	if err != nil {
		return nil, fmt.Errorf("allocating an IP: %w", err)
	}
	return net.IP(a.at(off).AsSlice()), nil
}

// AllocateSpecific records ip for owner if it is in range and free.
func (a *Allocator) AllocateSpecific(ctx context.Context, ip net.IP, owner string) error {
	addr, err := a.inRange(ip)
	if err != nil {
		return err
	}
	err = a.slots.Claim(ctx, addr.String(), owner)
	if held, ok := errors.AsType[*rangealloc.HeldError](err); ok {
		return &AllocatedError{IP: net.IP(addr.AsSlice()), Owner: held.Owner}
	}
	return err
}

// Release frees ip. Releasing a free IP is not an error. Any valid IP is accepted, not
// only those in the current range, so records made under an earlier
// --service-cluster-ip-range are still released when their Service is deleted.
func (a *Allocator) Release(ctx context.Context, ip net.IP) error {
	addr, ok := netip.AddrFromSlice(ip)
	if !ok {
		return fmt.Errorf("releasing IP: invalid address %v", ip)
	}
	return a.slots.Release(ctx, addr.Unmap().String())
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

// space is the allocator's range as rangealloc sees it: slot i is the
// i-th usable address, named by its text. Records of other ranges (another
// IP family, an earlier range) share the key space and are outside it.
type space struct{ a *Allocator }

func (s space) Size() uint64 { return s.a.size }

func (s space) Name(off uint64) string { return s.a.at(off).String() }

func (s space) Offset(name string) (uint64, bool) {
	addr, err := netip.ParseAddr(name)
	if err != nil {
		return 0, false
	}
	return s.a.offset(addr)
}

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
