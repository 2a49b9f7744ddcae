// Package rangealloc hands out the slots of a numbered range (Service
// cluster IPs, node ports) as etcd keys: every allocated slot is a key
// <prefix><name> whose value is its owner, created with a create-if-absent
// transaction, so any number of API server processes can allocate from one
// range at once and never hand out a slot twice; nothing is cached in
// memory. What a slot is (an address, a port) is the Space's business.
package rangealloc

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/dnsplane/dnsplane/internal/storage"
)

// ErrFull means every slot of the range is allocated.
var ErrFull = errors.New("range is full")

// ErrHeld means a claimed slot belongs to someone (see HeldError).
var ErrHeld = errors.New("already allocated")

// HeldError is what Claim returns for a slot that is taken; it matches
// ErrHeld, and Owner lets a caller recognise its own earlier allocation.
type HeldError struct {
	Name  string
	Owner string
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("%s is already allocated to %s", e.Name, e.Owner)
}

// Is makes errors.Is(err, ErrHeld) true for a *HeldError.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// Space is a range of Size slots: Name is slot off's key suffix, Offset
// its inverse (ok false for a name outside the range, which records of
// other ranges sharing the key space are).
type Space interface {
	Size() uint64
	Name(off uint64) string
	Offset(name string) (off uint64, ok bool)
}

// listPage bounds one etcd response while Allocate reads the allocations.
const listPage = 4096

// Allocator allocates the slots of a Space under an etcd key prefix.
type Allocator struct {
	store  *storage.Store
	prefix string
	space  Space
}

// New returns the allocator of space's slots, stored under keyPrefix
// (e.g. "ranges/servicenodeports/").
func New(store *storage.Store, keyPrefix string, space Space) *Allocator {
	return &Allocator{store: store, prefix: keyPrefix, space: space}
}

// Allocate records and returns a free slot for owner (e.g.
// "services/ns/name").
//
// It tries one random slot first, which in a sparse range almost always
// succeeds in a single round trip. If that is taken it reads the existing
// allocations and walks the range from the random start, trying the free
// slots in turn; losing a race for one (another process took it since the
// read) just moves on to the next. The walk is bounded by the number of
// allocations, not the range size, so huge IPv6 ranges cost no more than
// small ones.
func (a *Allocator) Allocate(ctx context.Context, owner string) (uint64, error) {
	if owner == "" {
		return 0, errors.New("allocating: empty owner")
	}
	size := a.space.Size()
	start := rand.Uint64N(size)
	err := a.create(ctx, start, owner)
	if err == nil {
		return start, nil
	}
	if !errors.Is(err, storage.ErrExists) {
		return 0, err
	}
	taken, err := a.allocated(ctx)
	if err != nil {
		return 0, err
	}
	for i := uint64(0); i < size && uint64(len(taken)) < size; i++ {
		off := (start + i) % size
		if _, ok := taken[off]; ok {
			continue
		}
		err := a.create(ctx, off, owner)
		if err == nil {
			return off, nil
		}
		if !errors.Is(err, storage.ErrExists) {
			return 0, err
		}
		taken[off] = struct{}{}
	}
	return 0, ErrFull
}

// Claim records the slot called name for owner if it is free; the caller
// has checked that it is in the range.
func (a *Allocator) Claim(ctx context.Context, name, owner string) error {
	if owner == "" {
		return errors.New("allocating: empty owner")
	}
	// A few attempts because the holder may release it between our create
	// and our read.
	for range 3 {
		_, err := a.store.Create(ctx, a.prefix+name, []byte(owner))
		if err == nil {
			return nil
		}
		if !errors.Is(err, storage.ErrExists) {
			return fmt.Errorf("allocating %s: %w", name, err)
		}
		kv, err := a.store.Get(ctx, a.prefix+name)
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading the owner of %s: %w", name, err)
		}
		return &HeldError{Name: name, Owner: string(kv.Value)}
	}
	return fmt.Errorf("allocating %s: it keeps being released and reallocated", name)
}

// Release frees the slot called name, in the range or not (records made
// under an earlier range are released too). Releasing a free slot is not
// an error.
func (a *Allocator) Release(ctx context.Context, name string) error {
	if _, err := a.store.Delete(ctx, a.prefix+name, 0); err != nil && !errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("releasing %s: %w", name, err)
	}
	return nil
}

func (a *Allocator) create(ctx context.Context, off uint64, owner string) error {
	name := a.space.Name(off)
	if _, err := a.store.Create(ctx, a.prefix+name, []byte(owner)); err != nil {
		return fmt.Errorf("allocating %s: %w", name, err)
	}
	return nil
}

// allocated returns the offsets of every allocated slot of the range.
func (a *Allocator) allocated(ctx context.Context) (map[uint64]struct{}, error) {
	taken := map[uint64]struct{}{}
	opts := storage.ListOptions{Limit: listPage}
	for {
		page, err := a.store.List(ctx, a.prefix, opts)
		if err != nil {
			return nil, fmt.Errorf("reading allocations: %w", err)
		}
		for _, kv := range page.Items {
			if off, ok := a.space.Offset(kv.Key[len(a.prefix):]); ok {
				taken[off] = struct{}{}
			}
		}
		if page.Continue == "" {
			return taken, nil
		}
		opts.Continue = page.Continue
	}
}
