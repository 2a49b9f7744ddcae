package coredns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/miekg/dns"
	"golang.org/x/sys/unix"

	"github.com/dnsplane/dnsplane/internal/testkit"
)

// TestStartRefusesReusePortSocket: another process's CoreDNS holds the
// address with SO_REUSEPORT, which CoreDNS's own bind would join without an
// error; Start refuses it instead.
func TestStartRefusesReusePortSocket(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", testkit.FreeUDPTCPPort(t, "127.0.0.1"))
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
		}); err != nil {
			return err
		}
		return serr
	}}
	pc, err := lc.ListenPacket(context.Background(), "udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	l, err := lc.Listen(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	_, port, _ := net.SplitHostPort(addr)
	srv, err := Start(t.Context(), fmt.Sprintf(".:%s {\n    bind 127.0.0.1\n    errors\n}\n", port), nil)
	if err == nil {
		_ = srv.Stop()
		t.Fatalf("Start shared %s with a SO_REUSEPORT socket", addr)
	}
	var inUse *AddrInUseError
	if !errors.As(err, &inUse) || inUse.Addr != addr {
		t.Fatalf("error %v, want an *AddrInUseError for %s", err, addr)
	}
}

// TestStartSharedJoinsItself: two node caches during a rolling update serve
// one address through SO_REUSEPORT; StartShared lets the second in, and the
// address keeps answering when the first stops.
func TestStartSharedJoinsItself(t *testing.T) {
	port := testkit.FreeUDPTCPPort(t, "127.0.0.1")
	corefile := fmt.Sprintf(".:%d {\n    bind 127.0.0.1\n    template IN A example.org {\n        answer \"{{ .Name }} 60 IN A 192.0.2.1\"\n    }\n}\n", port)
	first, err := StartShared(t.Context(), corefile, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = first.Stop() }()
	if _, err := Start(t.Context(), corefile, nil); err == nil {
		t.Fatal("Start joined a served address")
	}
	second, err := StartShared(t.Context(), corefile, nil)
	if err != nil {
		t.Fatalf("StartShared on the address the first serves: %v", err)
	}
	defer func() { _ = second.Stop() }()
	if err := first.Stop(); err != nil {
		t.Fatal(err)
	}
	m := new(dns.Msg)
	m.SetQuestion("example.org.", dns.TypeA)
	r, err := dns.Exchange(m, fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil || len(r.Answer) != 1 {
		t.Fatalf("after the first stopped: %v, %v", r, err)
	}
}
