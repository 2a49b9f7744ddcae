package kubernetesservice

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/dnsplane/dnsplane/internal/storage"
)

// TestEtcdLeases: an address is listed while its lease is renewed, is
// gone at once when removed, and drops out by itself when its API server
// stops renewing (a crash); removing a missing one is ErrNoLease, which
// the controller reads as a clean last stop.
func TestEtcdLeases(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	emb, err := storage.StartEmbedded(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emb.Close() })
	client, err := storage.Connect(ctx, emb.ClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	long := NewEtcdLeases(client, "/registry", time.Minute)
	short := NewEtcdLeases(client, "/registry", 2*time.Second)

	for _, ip := range []string{"192.0.2.10", "192.0.2.11"} {
		if err := long.Update(ctx, ip); err != nil {
			t.Fatal(err)
		}
	}
	if err := short.Update(ctx, "192.0.2.12"); err != nil {
		t.Fatal(err)
	}
	list := func() []string {
		t.Helper()
		ips, err := long.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(ips)
		return ips
	}
	if got, want := list(), []string{"192.0.2.10", "192.0.2.11", "192.0.2.12"}; !slices.Equal(got, want) {
		t.Fatalf("leases %v, want %v", got, want)
	}
	if err := long.Remove(ctx, "192.0.2.11"); err != nil {
		t.Fatal(err)
	}
	if err := long.Remove(ctx, "192.0.2.11"); !errors.Is(err, ErrNoLease) {
		t.Errorf("removing a missing lease: %v, want not found", err)
	}
	var got []string
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		got = list()
		return slices.Equal(got, []string{"192.0.2.10"}), nil
	})
	if err != nil {
		t.Fatalf("leases %v, want the expired one gone: %v", got, err)
	}
}
