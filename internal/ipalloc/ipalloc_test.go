package ipalloc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/dnsplane/dnsplane/internal/storage"
)

// clients are two independent connections to one embedded etcd, standing in for two
// API server processes.
var clients [2]*clientv3.Client

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "dnsplane-ipalloc-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	emb, err := storage.StartEmbedded(ctx, dir, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer emb.Close()
	for i := range clients {
		c, err := storage.Connect(ctx, emb.ClientConfig())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer c.Close()
		clients[i] = c
	}
	return m.Run()
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// newAllocator returns an allocator over a store private to the test.
func newAllocator(t *testing.T, client int, cidr string) *Allocator {
	t.Helper()
	a, err := New(storage.New(clients[client], "/test/"+t.Name()), cidr)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestNew(t *testing.T) {
	tests := []struct {
		cidr    string
		wantErr string
		size    uint64
	}{
		{"10.96.0.0/12", "", 1<<20 - 2},
		{"10.96.0.5/24", "", 254}, // host bits are masked off
		{"10.0.0.0/30", "", 2},
		{"10.0.0.0/31", "too small", 0},
		{"10.0.0.1/32", "too small", 0},
		{"fd00::/120", "", 255},
		{"fd00::/127", "", 1},
		{"fd00::1/128", "too small", 0},
		{"fd00::/64", "", maxSize},
		{"::ffff:10.0.0.0/120", "IPv4-mapped", 0},
		{"10.0.0.0", "service IP range", 0},
		{"banana", "service IP range", 0},
	}
	for _, tt := range tests {
		t.Run(tt.cidr, func(t *testing.T) {
			a, err := New(storage.New(clients[0], "/test/"+t.Name()), tt.cidr)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.size != tt.size {
				t.Errorf("size = %d, want %d", a.size, tt.size)
			}
			want := netip.MustParsePrefix(tt.cidr).Masked().String()
			if got := a.Range().String(); got != want {
				t.Errorf("Range() = %s, want %s", got, want)
			}
		})
	}
}

func TestAllocateUntilFull(t *testing.T) {
	tests := []struct {
		cidr   string
		usable []string
	}{
		{"10.0.0.0/29", []string{"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5", "10.0.0.6"}},
		{"192.168.1.4/30", []string{"192.168.1.5", "192.168.1.6"}},
		{"fd00:1::/125", []string{"fd00:1::1", "fd00:1::2", "fd00:1::3", "fd00:1::4", "fd00:1::5", "fd00:1::6", "fd00:1::7"}},
	}
	for _, tt := range tests {
		t.Run(tt.cidr, func(t *testing.T) {
			a := newAllocator(t, 0, tt.cidr)
			ctx := testCtx(t)
			got := map[string]bool{}
			for i := range tt.usable {
				ip, err := a.Allocate(ctx, fmt.Sprintf("services/ns/s%d", i))
				if err != nil {
					t.Fatalf("allocation %d: %v", i, err)
				}
				if got[ip.String()] {
					t.Fatalf("%s handed out twice", ip)
				}
				got[ip.String()] = true
			}
			for _, ip := range tt.usable {
				if !got[ip] {
					t.Errorf("%s never handed out; got %v", ip, got)
				}
			}
			if ip, err := a.Allocate(ctx, "services/ns/one-too-many"); !errors.Is(err, ErrFull) {
				t.Fatalf("allocation beyond the range = %v, %v; want ErrFull", ip, err)
			}
		})
	}
}

func TestAllocateSpecific(t *testing.T) {
	a := newAllocator(t, 0, "10.96.0.0/12")
	ctx := testCtx(t)
	if err := a.AllocateSpecific(ctx, net.ParseIP("10.96.0.1"), "services/default/kubernetes"); err != nil {
		t.Fatal(err)
	}
	if err := a.AllocateSpecific(ctx, net.ParseIP("10.96.0.10").To4(), "services/kube-system/dns"); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name      string
		ip        net.IP
		wantErr   error
		wantInMsg string
	}{
		{"free", net.ParseIP("10.100.3.4"), nil, ""},
		{"taken", net.ParseIP("10.96.0.1"), ErrAllocated, "services/default/kubernetes"},
		{"taken, 4-byte form", net.ParseIP("10.96.0.10").To4(), ErrAllocated, "services/kube-system/dns"},
		{"network address", net.ParseIP("10.96.0.0"), ErrNotInRange, "network address"},
		{"broadcast address", net.ParseIP("10.111.255.255"), ErrNotInRange, "broadcast address"},
		{"outside", net.ParseIP("10.112.0.1"), ErrNotInRange, "The range of valid IPs is 10.96.0.0/12"},
		{"other family", net.ParseIP("fd00::1"), ErrNotInRange, "(fd00::1)"},
		{"invalid", net.IP{1, 2, 3}, ErrNotInRange, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := a.AllocateSpecific(ctx, tt.ip, "services/ns/new")
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), tt.wantInMsg) {
				t.Errorf("message %q does not contain %q", err, tt.wantInMsg)
			}
		})
	}

	var allocErr *AllocatedError
	err := a.AllocateSpecific(ctx, net.ParseIP("10.96.0.1"), "services/default/kubernetes")
	if !errors.As(err, &allocErr) || allocErr.Owner != "services/default/kubernetes" || !allocErr.IP.Equal(net.ParseIP("10.96.0.1")) {
		t.Fatalf("err = %#v, want an AllocatedError naming the owner", err)
	}
}

func TestReleaseThenReallocate(t *testing.T) {
	a := newAllocator(t, 0, "10.0.0.0/29")
	ctx := testCtx(t)
	ip := net.ParseIP("10.0.0.3")
	if err := a.AllocateSpecific(ctx, ip, "services/ns/a"); err != nil {
		t.Fatal(err)
	}
	for range 2 { // idempotent
		if err := a.Release(ctx, ip); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.AllocateSpecific(ctx, ip, "services/ns/b"); err != nil {
		t.Fatalf("reallocating a released IP: %v", err)
	}

	// Fill the range, free one address: Allocate must find exactly that one.
	for {
		if _, err := a.Allocate(ctx, "services/ns/filler"); errors.Is(err, ErrFull) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	freed := net.ParseIP("10.0.0.5")
	if err := a.Release(ctx, freed); err != nil {
		t.Fatal(err)
	}
	got, err := a.Allocate(ctx, "services/ns/c")
	if err != nil || !got.Equal(freed) {
		t.Fatalf("Allocate after release = %v, %v; want %s", got, err, freed)
	}

	// Records outside the current range (an earlier --service-cluster-ip-range) are
	// released too.
	old := newAllocator(t, 0, "10.1.0.0/29")
	if err := old.AllocateSpecific(ctx, net.ParseIP("10.1.0.1"), "services/ns/old"); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx, net.ParseIP("10.1.0.1")); err != nil {
		t.Fatal(err)
	}
	if err := old.AllocateSpecific(ctx, net.ParseIP("10.1.0.1"), "services/ns/new"); err != nil {
		t.Fatalf("out-of-range record not released: %v", err)
	}
}

// TestConcurrentAllocatorsNeverShare races two allocators, each on its own etcd client
// as in two API server processes, for a /28 until it is full.
func TestConcurrentAllocatorsNeverShare(t *testing.T) {
	const usable = 14
	allocs := []*Allocator{newAllocator(t, 0, "10.9.0.0/28"), newAllocator(t, 1, "10.9.0.0/28")}
	ctx := testCtx(t)

	var mu sync.Mutex
	owners := map[string]string{}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		a := allocs[w%2]
		wg.Go(func() {
			for i := 0; ; i++ {
				owner := fmt.Sprintf("services/ns/w%d-%d", w, i)
				ip, err := a.Allocate(ctx, owner)
				if errors.Is(err, ErrFull) {
					return
				}
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				if prev, dup := owners[ip.String()]; dup {
					errs <- fmt.Errorf("%s handed to both %s and %s", ip, prev, owner)
				}
				owners[ip.String()] = owner
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(owners) != usable {
		t.Fatalf("%d IPs handed out, want all %d", len(owners), usable)
	}
	// etcd agrees with what the callers were told.
	store := storage.New(clients[0], "/test/"+t.Name())
	for ip, owner := range owners {
		kv, err := store.Get(ctx, keyPrefix+ip)
		if err != nil || string(kv.Value) != owner {
			t.Errorf("record for %s = %q, %v; want %s", ip, kv.Value, err, owner)
		}
	}
}

func TestIPv6(t *testing.T) {
	ctx := testCtx(t)
	t.Run("/120", func(t *testing.T) {
		a := newAllocator(t, 0, "fd00:10:96::/120")
		seen := map[string]bool{}
		for i := range 40 {
			ip, err := a.Allocate(ctx, fmt.Sprintf("services/ns/s%d", i))
			if err != nil {
				t.Fatal(err)
			}
			addr, _ := netip.AddrFromSlice(ip)
			if !addr.Is6() || !a.prefix.Contains(addr) || addr == a.prefix.Addr() || seen[addr.String()] {
				t.Fatalf("allocation %d = %s", i, addr)
			}
			seen[addr.String()] = true
		}
		if err := a.AllocateSpecific(ctx, net.ParseIP("fd00:10:96::ff"), "services/ns/last"); err != nil && !errors.Is(err, ErrAllocated) {
			t.Fatalf("the last address of an IPv6 range is usable (no broadcast): %v", err)
		}
		if err := a.AllocateSpecific(ctx, net.ParseIP("fd00:10:96::"), "services/ns/net"); !errors.Is(err, ErrNotInRange) {
			t.Fatalf("network address: err = %v, want ErrNotInRange", err)
		}
	})
	t.Run("/64", func(t *testing.T) {
		a := newAllocator(t, 0, "fd00:20::/64")
		var first net.IP
		for i := range 5 {
			ip, err := a.Allocate(ctx, fmt.Sprintf("services/ns/s%d", i))
			if err != nil {
				t.Fatal(err)
			}
			addr, _ := netip.AddrFromSlice(ip)
			if !a.prefix.Contains(addr) || addr == a.prefix.Addr() {
				t.Fatalf("allocation %s outside %s", addr, a.prefix)
			}
			first = ip
		}
		if err := a.AllocateSpecific(ctx, first, "services/ns/dup"); !errors.Is(err, ErrAllocated) {
			t.Fatalf("err = %v, want ErrAllocated", err)
		}
		if err := a.AllocateSpecific(ctx, net.ParseIP("fd00:20::ffff:ffff:ffff:ffff"), "services/ns/top"); err != nil {
			t.Fatalf("last address of a /64: %v", err)
		}
	})
}

func TestOffsetRoundTrip(t *testing.T) {
	tests := []struct {
		cidr string
		off  uint64
		want string
	}{
		{"10.96.0.0/12", 0, "10.96.0.1"},
		{"10.96.0.0/12", 255, "10.96.1.0"},
		{"10.96.0.0/12", 1<<20 - 3, "10.111.255.254"},
		{"fd00::/64", 0, "fd00::1"},
		{"fd00::/64", 0xffff, "fd00::1:0"},
		{"fd00:0:0:1::/64", maxSize - 1, "fd00:0:0:1:4000::"},
		{"fd00:0:0:0:ffff:ffff:ffff:ff00/120", 254, "fd00::ffff:ffff:ffff:ffff"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s+%d", tt.cidr, tt.off), func(t *testing.T) {
			a, err := New(nil, tt.cidr)
			if err != nil {
				t.Fatal(err)
			}
			got := a.at(tt.off)
			if got.String() != tt.want {
				t.Fatalf("at(%d) = %s, want %s", tt.off, got, tt.want)
			}
			if off, ok := a.offset(got); !ok || off != tt.off {
				t.Fatalf("offset(%s) = %d, %v; want %d", got, off, ok, tt.off)
			}
		})
	}
	a, _ := New(nil, "10.96.0.0/12")
	for _, s := range []string{"10.96.0.0", "10.111.255.255", "10.112.0.0", "fd00::1"} {
		if off, ok := a.offset(netip.MustParseAddr(s)); ok {
			t.Errorf("offset(%s) = %d, want outside the allocatable range", s, off)
		}
	}
}
