package coredns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/dnsplane/dnsplane/internal/testkit"
)

func TestListenAddrs(t *testing.T) {
	tests := []struct {
		name     string
		corefile string
		want     []listenAddr
	}{
		{"bind one address", ".:10053 {\n    bind 127.0.0.1\n    errors\n}\n",
			[]listenAddr{{"udp", "127.0.0.1:10053"}, {"tcp", "127.0.0.1:10053"}}},
		{"no bind, default port", ". {\n    errors\n}\n",
			[]listenAddr{{"udp", ":53"}, {"tcp", ":53"}}},
		{"two keys on one port are probed once", "cluster.local:5300 ap.k8s.io:5300 {\n    bind 127.0.0.1 ::1\n    errors\n}\n.:5300 {\n    bind 127.0.0.1\n    errors\n}\n",
			[]listenAddr{{"udp", "127.0.0.1:5300"}, {"tcp", "127.0.0.1:5300"}, {"udp", "[::1]:5300"}, {"tcp", "[::1]:5300"}}},
		{"except", ".:5300 {\n    bind 127.0.0.1 127.0.0.2 {\n        except 127.0.0.2\n    }\n}\n",
			[]listenAddr{{"udp", "127.0.0.1:5300"}, {"tcp", "127.0.0.1:5300"}}},
		{"transports", "tls://.:8853 grpc://. quic://.:8853 {\n    bind 127.0.0.1\n}\n",
			[]listenAddr{{"tcp", "127.0.0.1:8853"}, {"tcp", "127.0.0.1:443"}, {"udp", "127.0.0.1:8853"}}},
		{"port 0 is left to the kernel", ".:0 {\n    bind 127.0.0.1\n}\n", nil},
		{"unknown interface is left to CoreDNS", ".:5300 {\n    bind no-such-interface0\n}\n", nil},
		{"parse error is left to CoreDNS", ".:5300 {\n    nosuchplugin\n}\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := listenAddrs(tt.corefile); !slices.Equal(got, tt.want) {
				t.Errorf("listenAddrs = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestStartRefusesServedAddress: a second server on an address a running
// one serves fails with an *AddrInUseError naming it, instead of sharing it
// through SO_REUSEPORT; the first keeps answering, and once it stopped the
// address can be served again.
func TestStartRefusesServedAddress(t *testing.T) {
	ctx := t.Context()
	addr := fmt.Sprintf("127.0.0.1:%d", testkit.FreeUDPTCPPort(t, "127.0.0.1"))
	_, port, _ := net.SplitHostPort(addr)
	corefile := func(id string) string {
		return fmt.Sprintf(".:%s {\n    bind 127.0.0.1\n    chaos %s\n}\n", port, id)
	}
	first, err := Start(ctx, corefile("first"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := first.Stop(); err != nil {
			t.Errorf("stopping first: %v", err)
		}
	}()

	second, err := Start(ctx, corefile("second"), nil)
	if err == nil {
		_ = second.Stop()
		t.Fatal("second server on the same address started")
	}
	var inUse *AddrInUseError
	if !errors.As(err, &inUse) || inUse.Addr != addr || !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("error %v (%T), want an *AddrInUseError for %s wrapping EADDRINUSE", err, err, addr)
	}
	if want := addr + " is already served by another process"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	for range 5 {
		if got := chaosVersion(t, addr); got != "first" {
			t.Fatalf("version.bind from %s = %q, want the first server's", addr, got)
		}
	}

	if err := first.Stop(); err != nil {
		t.Fatal(err)
	}
	again, err := Start(ctx, corefile("again"), nil)
	if err != nil {
		t.Fatalf("starting on a released address: %v", err)
	}
	defer func() {
		if err := again.Stop(); err != nil {
			t.Errorf("stopping again: %v", err)
		}
	}()
	if got := chaosVersion(t, addr); got != "again" {
		t.Errorf("version.bind = %q, want again", got)
	}
}

// TestReloadKeepsAddressAfterProbe: a graceful reload re-binds the address
// the running instance holds, so it must not be probed again.
func TestReloadKeepsAddressAfterProbe(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", testkit.FreeUDPTCPPort(t, "127.0.0.1"))
	_, port, _ := net.SplitHostPort(addr)
	a := &applier{logger: slog.New(slog.DiscardHandler), source: "test"}
	defer a.stop()
	a.apply(t.Context(), fmt.Sprintf(".:%s {\n    bind 127.0.0.1\n    chaos one\n}\n", port))
	if !a.serving() {
		t.Fatal("first Corefile did not start")
	}
	a.apply(t.Context(), fmt.Sprintf(".:%s {\n    bind 127.0.0.1\n    chaos two\n}\n", port))
	// The old instance may answer a last query from the handed-over
	// socket while it stops.
	// A bound, not a timing assertion: on a loaded machine the reload can
	// take seconds.
	testkit.PollEvery(t, "version.bind of the new Corefile after reload", 50*time.Millisecond, 20*time.Second, func(context.Context) (bool, error) {
		got := chaosVersion(t, addr)
		return got == "two", fmt.Errorf("version.bind %q", got)
	})
}

// chaosVersion asks addr for version.bind (CH TXT) over UDP.
func chaosVersion(t *testing.T, addr string) string {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion("version.bind.", dns.TypeTXT)
	m.Question[0].Qclass = dns.ClassCHAOS
	c := &dns.Client{Timeout: 2 * time.Second}
	resp, _, err := c.ExchangeContext(context.Background(), m, addr)
	if err != nil {
		t.Fatalf("querying %s: %v", addr, err)
	}
	if len(resp.Answer) != 1 {
		t.Fatalf("answer %v", resp.Answer)
	}
	txt, ok := resp.Answer[0].(*dns.TXT)
	if !ok || len(txt.Txt) != 1 {
		t.Fatalf("answer %v", resp.Answer[0])
	}
	return strings.TrimSpace(txt.Txt[0])
}
