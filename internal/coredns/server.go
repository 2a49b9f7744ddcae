package coredns

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
)

// startMu serialises Start: dnsserver.Directives and the caddy quiet flags
// are process globals.
var startMu sync.Mutex

// Server is a running CoreDNS instance.
type Server struct {
	inst   *caddy.Instance
	logger *slog.Logger
	once   sync.Once
	err    error
	done   chan struct{}
}

// Start loads corefile into a new CoreDNS instance with dnsplane's plugin
// order and serves it until Stop is called or ctx ends.
//
// It sets CoreDNS's process-global dnsserver.Directives to Directives(), so
// a process should not run CoreDNS instances that expect another order.
//
// Start refuses, with an *AddrInUseError, an address another socket already
// serves, which CoreDNS alone would share through SO_REUSEPORT (see
// checkExclusive). Reloads (RunFromFile, RunFromConfigMap) keep their
// listeners and are not checked again.
func Start(ctx context.Context, corefile string, logger *slog.Logger) (*Server, error) {
	if err := checkExclusive(corefile); err != nil {
		return nil, err
	}
	return StartShared(ctx, corefile, logger)
}

// StartShared is Start without the check that no other socket serves the
// Corefile's addresses: for a server meant to share them through
// SO_REUSEPORT with another instance of itself, the node cache during a
// DaemonSet rolling update (docs/kubernetes.md).
func StartShared(ctx context.Context, corefile string, logger *slog.Logger) (*Server, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	startMu.Lock()
	dnsserver.Directives = Directives()
	caddy.Quiet, dnsserver.Quiet = true, true
	inst, err := caddy.Start(caddy.CaddyfileInput{Contents: []byte(corefile), Filepath: "Corefile", ServerTypeName: "dns"})
	if err == nil {
		// Under startMu, so that DryLoad never sees a started instance
		// missing from live.
		live.add(inst)
	}
	startMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("loading Corefile: %w", err)
	}
	s := &Server{inst: inst, logger: logger, done: make(chan struct{})}
	for _, a := range s.Addrs() {
		logger.Info("serving DNS", "addr", a.String(), "network", a.Network())
	}
	go func() {
		select {
		case <-ctx.Done():
			_ = s.Stop()
		case <-s.done:
		}
	}()
	return s, nil
}

// Addrs returns the addresses the instance listens on, UDP and TCP, in
// server order; useful when the Corefile asked for port 0.
func (s *Server) Addrs() []net.Addr {
	var out []net.Addr
	for _, l := range s.inst.Servers() {
		if a := l.LocalAddr(); a != nil {
			out = append(out, a)
		}
		if a := l.Addr(); a != nil {
			out = append(out, a)
		}
	}
	return out
}

// UDPAddr returns the first server's UDP address, or "" if there is none.
func (s *Server) UDPAddr() string {
	for _, l := range s.inst.Servers() {
		if a := l.LocalAddr(); a != nil {
			return a.String()
		}
	}
	return ""
}

// Stop shuts the instance down; it is safe to call more than once.
func (s *Server) Stop() error {
	s.once.Do(func() {
		s.err = s.inst.Stop()
		s.inst.ShutdownCallbacks()
		live.remove(s.inst)
		close(s.done)
		s.logger.Info("DNS server stopped")
	})
	return s.err
}

// Done is closed once Stop has completed.
func (s *Server) Done() <-chan struct{} { return s.done }

// CanListen reports whether addr (ADDR:PORT) can be bound now for both UDP
// and TCP, releasing it again. A caller choosing between addresses uses it
// to fall back before starting CoreDNS, whose bind errors do not wrap the
// system error.
func CanListen(addr string) error {
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return err
	}
	defer pc.Close()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return l.Close()
}
