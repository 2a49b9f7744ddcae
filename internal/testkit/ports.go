package testkit

import (
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"testing"
)

// FreePort is a TCP port on 127.0.0.1 that was free a moment ago, for a
// child that takes a port only on its command line (etcd, kube-scheduler).
// Another process may take it before the child binds it; a DNS server,
// which binds UDP and TCP, should use FreeUDPTCPAddr instead.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("a free TCP port on 127.0.0.1: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// FreeUDPTCPPort is a port free on host for both UDP and TCP a moment ago.
// A port the kernel picked for UDP alone can be, for TCP, the source port
// of a connection another test made, which is how a DNS server on it failed
// with "already served by another process".
func FreeUDPTCPPort(t testing.TB, host string) int {
	t.Helper()
	port, err := freeUDPTCPPort(host)
	if err != nil {
		t.Fatal(err)
	}
	return port
}

func freeUDPTCPPort(host string) (int, error) {
	var last error
	for range 20 {
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return 0, fmt.Errorf("a free TCP port on %s: %w", host, err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		pc, err := net.ListenPacket("udp", net.JoinHostPort(host, strconv.Itoa(port)))
		l.Close()
		if err != nil {
			last = err
			continue
		}
		pc.Close()
		return port, nil
	}
	return 0, fmt.Errorf("no port on %s free for both UDP and TCP in 20 tries: %w", host, last)
}

// LoopbackAddr is a random address of 127.0.0.0/8 outside 127.0.0.0/16,
// where fixed test addresses and systemd-resolved (127.0.0.53) live, that
// UDP and TCP can both bind. Linux routes all of 127/8 to lo, so a server
// there shares its port with nothing on 127.0.0.1: neither a parallel
// test's server nor the source port of any connection to 127.0.0.1.
// Elsewhere (only 127.0.0.1 configured) it is 127.0.0.1.
func LoopbackAddr(t testing.TB) string {
	t.Helper()
	for range 5 {
		ip := net.IPv4(127, byte(1+rand.IntN(254)), byte(rand.IntN(256)), byte(1+rand.IntN(254))).String()
		if _, err := freeUDPTCPPort(ip); err == nil {
			return ip
		}
	}
	t.Logf("no address of 127.0.0.0/8 besides 127.0.0.1 can be bound; using 127.0.0.1")
	return "127.0.0.1"
}

// FreeUDPTCPAddr is host:port on a LoopbackAddr with a port free there for
// both UDP and TCP: the address for a DNS server under test.
func FreeUDPTCPAddr(t testing.TB) string {
	t.Helper()
	host := LoopbackAddr(t)
	return net.JoinHostPort(host, strconv.Itoa(FreeUDPTCPPort(t, host)))
}
