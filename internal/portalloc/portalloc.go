// Package portalloc allocates Service node ports from kube-apiserver's
// --service-node-port-range (default 30000-32767). Every allocated port is
// an etcd key (<store prefix>/ranges/servicenodeports/<port>, value: the
// owner) that internal/rangealloc creates with a create-if-absent
// transaction, as internal/ipalloc does for cluster IPs, so several API
// servers never hand out one port twice.
package portalloc

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/dnsplane/dnsplane/internal/rangealloc"
	"github.com/dnsplane/dnsplane/internal/storage"
)

// DefaultRange is kube-apiserver's default --service-node-port-range.
const DefaultRange = "30000-32767"

const keyPrefix = "ranges/servicenodeports/"

// Errors of the allocator, worded as kube-apiserver's port allocator
// (pkg/registry/core/service/portallocator) so that the API answers
// carry the same text.
var (
	ErrFull       = errors.New("range is full")
	ErrAllocated  = errors.New("provided port is already allocated")
	ErrNotInRange = errors.New("provided port is not in the valid range")
)

type notInRangeError struct{ valid string }

func (e *notInRangeError) Error() string {
	return "provided port is not in the valid range. The range of valid ports is " + e.valid
}

func (e *notInRangeError) Is(target error) bool { return target == ErrNotInRange }

// Allocator hands out the ports of one range.
type Allocator struct {
	slots *rangealloc.Allocator
	r     utilnet.PortRange
}

// ParseRange parses a --service-node-port-range: "30000-32767", or
// "30000+2767", as kube-apiserver's flag (utilnet.PortRange) reads it.
func ParseRange(s string) (utilnet.PortRange, error) {
	var r utilnet.PortRange
	if err := r.Set(s); err != nil {
		return r, fmt.Errorf("service node port range %q: %w", s, err)
	}
	if r.Size == 0 {
		return r, fmt.Errorf("service node port range %q is empty", s)
	}
	return r, nil
}

// New returns the allocator of the ports of rng (e.g. "30000-32767").
func New(store *storage.Store, rng string) (*Allocator, error) {
	r, err := ParseRange(rng)
	if err != nil {
		return nil, err
	}
	return &Allocator{slots: rangealloc.New(store, keyPrefix, space{r}), r: r}, nil
}

// Allocate records and returns a free port for owner (e.g. "services/ns/name").
func (a *Allocator) Allocate(ctx context.Context, owner string) (int, error) {
	off, err := a.slots.Allocate(ctx, owner)
	if errors.Is(err, rangealloc.ErrFull) {
		return 0, fmt.Errorf("allocating a node port from %s: %w", a.r.String(), ErrFull)
	}
	if err != nil {
		return 0, fmt.Errorf("allocating a node port: %w", err)
	}
	return a.r.Base + int(off), nil //nolint:gosec // off < Size, an int
}

// AllocateSpecific records port for owner if it is in the range and free.
func (a *Allocator) AllocateSpecific(ctx context.Context, port int, owner string) error {
	if !a.r.Contains(port) {
		return &notInRangeError{valid: a.r.String()}
	}
	err := a.slots.Claim(ctx, strconv.Itoa(port), owner)
	if errors.Is(err, rangealloc.ErrHeld) {
		return ErrAllocated
	}
	return err
}

// Release frees port, in the range or not (records of an earlier range
// are released too). Releasing a free port is not an error.
func (a *Allocator) Release(ctx context.Context, port int) error {
	return a.slots.Release(ctx, strconv.Itoa(port))
}

// space is the range as rangealloc sees it: slot i is port Base+i.
type space struct{ r utilnet.PortRange }

func (s space) Size() uint64 { return uint64(s.r.Size) } //nolint:gosec // a range size is positive

func (s space) Name(off uint64) string { return strconv.Itoa(s.r.Base + int(off)) } //nolint:gosec // off < Size

func (s space) Offset(name string) (uint64, bool) {
	p, err := strconv.Atoi(name)
	if err != nil || !s.r.Contains(p) {
		return 0, false
	}
	return uint64(p - s.r.Base), true //nolint:gosec // checked above
}
