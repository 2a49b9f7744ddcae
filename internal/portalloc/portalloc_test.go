package portalloc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/dnsplane/dnsplane/internal/storage"
)

var client *clientv3.Client

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "dnsplane-portalloc-test-")
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
	client, err = storage.Connect(ctx, emb.ClientConfig())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer client.Close()
	return m.Run()
}

func newAllocator(t *testing.T, rng string) *Allocator {
	t.Helper()
	a, err := New(storage.New(client, "/test/"+t.Name()), rng)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestParseRange(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in         string
		base, size int
		wantErr    bool
	}{
		{in: "30000-32767", base: 30000, size: 2768},
		{in: "30000+99", base: 30000, size: 100},
		{in: "8080", base: 8080, size: 1},
		{in: "32767-30000", wantErr: true},
		{in: "0-70000", wantErr: true},
		{in: "ports", wantErr: true},
		{in: "", wantErr: true},
	} {
		r, err := ParseRange(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("ParseRange(%q): %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if err == nil && (r.Base != tc.base || r.Size != tc.size) {
			t.Errorf("ParseRange(%q) = %d+%d, want %d+%d", tc.in, r.Base, r.Size, tc.base, tc.size)
		}
	}
}

func TestAllocateUntilFullAndRelease(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	a := newAllocator(t, "30000-30002")
	var got []int
	for i := range 3 {
		p, err := a.Allocate(ctx, fmt.Sprintf("services/ns/s%d", i))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p)
	}
	slices.Sort(got)
	if !slices.Equal(got, []int{30000, 30001, 30002}) {
		t.Fatalf("allocated %v, want the whole range once", got)
	}
	if _, err := a.Allocate(ctx, "services/ns/s3"); !errors.Is(err, ErrFull) {
		t.Fatalf("allocating from a full range: %v, want ErrFull", err)
	}
	if err := a.Release(ctx, 30001); err != nil {
		t.Fatal(err)
	}
	if p, err := a.Allocate(ctx, "services/ns/s4"); err != nil || p != 30001 {
		t.Fatalf("after releasing 30001: %d, %v", p, err)
	}
}

func TestAllocateSpecific(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	a := newAllocator(t, DefaultRange)
	if err := a.AllocateSpecific(ctx, 30080, "services/ns/a"); err != nil {
		t.Fatal(err)
	}
	if err := a.AllocateSpecific(ctx, 30080, "services/ns/b"); !errors.Is(err, ErrAllocated) || err.Error() != "provided port is already allocated" {
		t.Errorf("a taken port: %v", err)
	}
	err := a.AllocateSpecific(ctx, 80, "services/ns/b")
	if want := "provided port is not in the valid range. The range of valid ports is 30000-32767"; !errors.Is(err, ErrNotInRange) || err == nil || err.Error() != want {
		t.Errorf("a port out of range: %v, want %q", err, want)
	}
	if err := a.Release(ctx, 30080); err != nil {
		t.Fatal(err)
	}
	if err := a.AllocateSpecific(ctx, 30080, "services/ns/b"); err != nil {
		t.Errorf("a released port: %v", err)
	}
	// Releasing a free port, or one outside the range, is no error.
	for _, p := range []int{30081, 80} {
		if err := a.Release(ctx, p); err != nil {
			t.Errorf("Release(%d): %v", p, err)
		}
	}
}
