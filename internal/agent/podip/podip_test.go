package podip

import (
	"errors"
	"net/netip"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestNew(t *testing.T) {
	for _, tc := range []struct {
		cidr     string
		capacity int
		wantErr  bool
	}{
		{"10.244.0.0/24", 253, false},
		{"10.244.0.0/30", 1, false},
		{"10.244.0.0/29", 5, false},
		{"10.244.0.0/31", 0, true},
		{"10.244.0.0/32", 0, true},
		{"10.244.0.1/24", 0, true},
		{"not-a-cidr", 0, true},
		{"fd00::/120", 254, false},
		{"fd00::/64", maxTracked, false},
	} {
		a, err := New(tc.cidr)
		if (err != nil) != tc.wantErr {
			t.Errorf("New(%q) error = %v, want error %v", tc.cidr, err, tc.wantErr)
			continue
		}
		if err == nil && a.Capacity() != tc.capacity {
			t.Errorf("New(%q).Capacity() = %d, want %d", tc.cidr, a.Capacity(), tc.capacity)
		}
	}
}

func TestAllocate(t *testing.T) {
	type step struct {
		op      string // allocate, reserve, release
		uid     string
		ip      string // reserve: the address; allocate: the expected one, or the error's text
		wantErr error
	}
	for _, tc := range []struct {
		name  string
		cidr  string
		steps []step
	}{
		{"skips network and gateway", "10.0.0.0/24", []step{
			{"allocate", "a", "10.0.0.2", nil},
			{"allocate", "b", "10.0.0.3", nil},
			{"allocate", "a", "10.0.0.2", nil}, // same pod, same IP
		}},
		{"full", "10.0.0.0/29", []step{
			{"allocate", "a", "10.0.0.2", nil},
			{"allocate", "b", "10.0.0.3", nil},
			{"allocate", "c", "10.0.0.4", nil},
			{"allocate", "d", "10.0.0.5", nil},
			{"allocate", "e", "10.0.0.6", nil},
			{"allocate", "f", "no IP addresses available in range set: 10.0.0.2-10.0.0.6", ErrFull}, // host-local's text
			{"release", "a", "", nil},
			{"allocate", "f", "10.0.0.2", nil},
		}},
		{"released IP not reused at once", "10.0.0.0/24", []step{
			{"allocate", "a", "10.0.0.2", nil},
			{"release", "a", "", nil},
			{"allocate", "b", "10.0.0.3", nil},
		}},
		{"reserve after restart", "10.0.0.0/24", []step{
			{"reserve", "a", "10.0.0.2", nil},
			{"reserve", "b", "10.0.0.4", nil},
			{"reserve", "b", "10.0.0.4", nil},
			{"reserve", "c", "10.0.0.4", ErrTaken},
			{"allocate", "c", "10.0.0.3", nil},
			{"allocate", "d", "10.0.0.5", nil},
		}},
		{"reserve outside", "10.0.0.0/24", []step{
			{"reserve", "a", "10.0.1.2", ErrNotInRange},
			{"reserve", "a", "10.0.0.0", ErrNotInRange},
			{"reserve", "a", "10.0.0.1", ErrNotInRange},
			{"reserve", "a", "10.0.0.255", ErrNotInRange}, // broadcast
			{"reserve", "a", "10.0.0.254", nil},
		}},
		{"wraps", "10.0.0.0/29", []step{
			{"reserve", "x", "10.0.0.6", nil},
			{"allocate", "a", "10.0.0.2", nil},
			{"release", "a", "", nil},
			{"allocate", "b", "10.0.0.3", nil},
			{"allocate", "c", "10.0.0.4", nil},
			{"allocate", "d", "10.0.0.5", nil},
			{"allocate", "f", "10.0.0.2", nil},
			{"allocate", "g", "", ErrFull},
		}},
		{"ipv6", "fd00::/120", []step{
			{"allocate", "a", "fd00::2", nil},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := New(tc.cidr)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range tc.steps {
				uid := types.UID(s.uid)
				switch s.op {
				case "allocate":
					ip, err := a.Allocate(uid)
					if !errors.Is(err, s.wantErr) {
						t.Fatalf("step %d: Allocate(%s) error = %v, want %v", i, s.uid, err, s.wantErr)
					}
					if err == nil && ip.String() != s.ip {
						t.Fatalf("step %d: Allocate(%s) = %s, want %s", i, s.uid, ip, s.ip)
					}
					if err != nil && s.ip != "" && err.Error() != s.ip {
						t.Fatalf("step %d: Allocate(%s) error %q, want %q", i, s.uid, err, s.ip)
					}
				case "reserve":
					err := a.Reserve(uid, netip.MustParseAddr(s.ip))
					if !errors.Is(err, s.wantErr) {
						t.Fatalf("step %d: Reserve(%s, %s) error = %v, want %v", i, s.uid, s.ip, err, s.wantErr)
					}
				case "release":
					a.Release(uid)
				}
			}
			// Never two pods on one address.
			seen := map[netip.Addr]bool{}
			for _, ip := range a.byUID {
				if seen[ip] {
					t.Fatalf("%s held twice", ip)
				}
				seen[ip] = true
			}
		})
	}
}
