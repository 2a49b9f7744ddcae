package podsandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// RangeSize is the number of IDs a pod's user namespace maps: container IDs
// 0..65535, as kubelet maps a pod with hostUsers: false (KEP-127).
const RangeSize = 1 << 16

// The host ID ranges pods get: base IDs 0x70000000, 0x70010000, ... up to
// 0x7FFD0000 (4094 ranges). Above systemd's container range
// (524288-1879048191) and below its "foreign" range 0x7FFE0000-0x7FFEFFFF
// and 2^31, which some tools mishandle, so that no range overlaps a host
// user, a systemd-nspawn container or the IDs below 65536 (docs/exec.md,
// "User namespaces").
const (
	DefaultFirstBase = 0x70000000
	DefaultRanges    = (0x7FFE0000 - DefaultFirstBase) / RangeSize
)

// DefaultLockDir holds one lock file per range. Every agent on the host
// (several run in one `dnsplane up --nodes N`, and standalone agents may
// run next to it) locks the file of the range it hands out, and the
// sandbox holding the range inherits the lock, so a range is never handed
// out twice while a sandbox uses it, whichever process started it.
const DefaultLockDir = "/run/dnsplane/userns"

// Allocator hands out host ID ranges for pods' user namespaces.
type Allocator struct {
	dir   string
	first uint32
	count int

	mu   sync.Mutex
	next int // where the next scan starts: ranges are handed out round-robin
}

// NewAllocator returns an allocator of count ranges of RangeSize IDs from
// first (a multiple of RangeSize, at least RangeSize so that no host ID
// below 65536 is ever mapped), locked in dir.
func NewAllocator(dir string, first uint32, count int) (*Allocator, error) {
	if dir == "" {
		return nil, errors.New("user namespace ranges: no lock dir")
	}
	if first < RangeSize || first%RangeSize != 0 {
		return nil, fmt.Errorf("user namespace ranges: first ID %d is not a multiple of %d above %d", first, RangeSize, RangeSize-1)
	}
	if count <= 0 || uint64(first)+uint64(count)*RangeSize > 1<<31 {
		return nil, fmt.Errorf("user namespace ranges: %d ranges from %d go past 2^31", count, first)
	}
	return &Allocator{dir: dir, first: first, count: count}, nil
}

// Lease is a range in use: its lock is held as long as the lease's file is
// open, in the agent or in the sandbox that inherited it.
type Lease struct {
	Base uint32
	f    *os.File
}

// File is the open lock file, to hand to the sandbox process.
func (l *Lease) File() *os.File { return l.f }

// Release closes the agent's copy of the lock; the range is free once the
// sandbox that inherited it is gone too.
func (l *Lease) Release() error { return l.f.Close() }

// ErrExhausted is returned when every range is in use.
var ErrExhausted = errors.New("every user namespace range is in use")

// Allocate locks a free range.
func (a *Allocator) Allocate() (*Lease, error) {
	if err := os.MkdirAll(a.dir, 0o700); err != nil {
		return nil, fmt.Errorf("user namespace ranges: %w", err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := range a.count {
		idx := (a.next + i) % a.count
		base := a.first + uint32(idx)*RangeSize //nolint:gosec // bounded by NewAllocator
		f, err := os.OpenFile(filepath.Join(a.dir, strconv.FormatUint(uint64(base), 10)+".lock"), os.O_RDWR|os.O_CREATE|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return nil, fmt.Errorf("user namespace ranges: %w", err)
		}
		// flock locks belong to the open file description, so a second
		// open of the same file, in this process or another, conflicts.
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			a.next = idx + 1
			return &Lease{Base: base, f: f}, nil
		}
		_ = f.Close()
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("user namespace ranges: locking range %d: %w", base, err)
		}
	}
	return nil, fmt.Errorf("%w (%d ranges from %d, %s)", ErrExhausted, a.count, a.first, a.dir)
}
