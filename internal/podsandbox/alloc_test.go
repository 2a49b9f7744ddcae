package podsandbox

import (
	"errors"
	"testing"
)

func TestAllocatorRanges(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, err := NewAllocator(dir, 2*RangeSize, 3)
	if err != nil {
		t.Fatal(err)
	}
	// A second agent on the same host: its own allocator, the same locks.
	b, err := NewAllocator(dir, 2*RangeSize, 3)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint32]bool{}
	var leases []*Lease
	for _, al := range []*Allocator{a, b, a} {
		l, err := al.Allocate()
		if err != nil {
			t.Fatal(err)
		}
		if l.Base%RangeSize != 0 || l.Base < 2*RangeSize || l.Base >= 5*RangeSize {
			t.Errorf("base %d: outside [%d, %d) or not a multiple of %d", l.Base, 2*RangeSize, 5*RangeSize, RangeSize)
		}
		if seen[l.Base] {
			t.Errorf("base %d handed out twice", l.Base)
		}
		seen[l.Base] = true
		leases = append(leases, l)
	}
	if _, err := b.Allocate(); !errors.Is(err, ErrExhausted) {
		t.Fatalf("fourth range: err = %v, want ErrExhausted", err)
	}
	freed := leases[1].Base
	if err := leases[1].Release(); err != nil {
		t.Fatal(err)
	}
	l, err := a.Allocate()
	if err != nil {
		t.Fatalf("after a release: %v", err)
	}
	if l.Base != freed {
		t.Errorf("after releasing %d got %d", freed, l.Base)
	}
	for _, l := range append(leases, l) {
		_ = l.Release()
	}
}

func TestNewAllocatorRefusesHostIDs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		first uint32
		count int
	}{
		{"host ids below 65536", 0, 1},
		{"not a multiple", RangeSize + 1, 1},
		{"past 2^31", 1<<31 - RangeSize, 2},
		{"no ranges", RangeSize, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, err := NewAllocator(t.TempDir(), tc.first, tc.count); err == nil {
				t.Errorf("NewAllocator(%d, %d): no error", tc.first, tc.count)
			}
		})
	}
	if _, err := NewAllocator(t.TempDir(), DefaultFirstBase, DefaultRanges); err != nil {
		t.Errorf("default ranges: %v", err)
	}
}
