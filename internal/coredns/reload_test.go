package coredns

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/dnsplane/dnsplane/internal/testkit"
)

// hostsAnswer asks addr for a.example A and returns the address, or "".
func hostsAnswer(addr string) string {
	m := new(dns.Msg)
	m.SetQuestion("a.example.", dns.TypeA)
	c := &dns.Client{Timeout: time.Second}
	r, _, err := c.Exchange(m, addr)
	if err != nil || r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 {
		return ""
	}
	if a, ok := r.Answer[0].(*dns.A); ok {
		return a.A.String()
	}
	return ""
}

// hostsCorefile serves a.example A ip on port, with the reload plugin at
// its fastest: it asks for the current Corefile every 2-3 s.
func hostsCorefile(port int, ip string) string {
	return fmt.Sprintf(".:%d {\n    bind 127.0.0.1\n    reload 2s 1s\n    hosts {\n        %s a.example\n    }\n}\n", port, ip)
}

// waitAnswer polls addr until a.example is want.
func waitAnswer(t *testing.T, addr, want string) {
	t.Helper()
	testkit.PollEvery(t, "a.example "+want, 50*time.Millisecond, 10*time.Second, func(context.Context) (bool, error) {
		got := hostsAnswer(addr)
		return got == want, fmt.Errorf("a.example = %q", got)
	})
}

// reloadFailures is CoreDNS's coredns_reload_failed_total.
func reloadFailures(t *testing.T) float64 {
	t.Helper()
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "coredns_reload_failed_total" {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return 0
}

// TestReloadPluginKeepsCorefile: the stock reload plugin asks caddy's
// Corefile loaders for the current Corefile. Without dnsplane's loader it
// got CoreDNS's built-in default (.:53 { whoami log }) and tried to replace
// the running configuration with it a few seconds after start.
func TestReloadPluginKeepsCorefile(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the reload plugin's ticks")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	port := testkit.FreeUDPTCPPort(t, "127.0.0.1")
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	failed0 := reloadFailures(t)
	srv, err := Start(ctx, hostsCorefile(port, "192.0.2.1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("stopping srv: %v", err)
		}
	}()
	if in, err := live.load("dns"); err != nil || string(in.Body()) != hostsCorefile(port, "192.0.2.1") {
		t.Fatalf("loader: %v, %v; want the running Corefile", in, err)
	}
	// Three of the plugin's longest intervals.
	for deadline := time.Now().Add(9 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if got := hostsAnswer(addr); got != "192.0.2.1" {
			t.Fatalf("a.example = %q; want the started Corefile's 192.0.2.1", got)
		}
	}
	if d := reloadFailures(t) - failed0; d != 0 {
		t.Errorf("the reload plugin failed %v reloads; it should have seen no change", d)
	}
}

// TestLoaderAmbiguous: with two instances in the process the loader cannot
// tell which one asks, and refuses rather than cross their Corefiles.
func TestLoaderAmbiguous(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, ip := range []string{"192.0.2.1", "192.0.2.2"} {
		srv, err := Start(ctx, hostsCorefile(testkit.FreeUDPTCPPort(t, "127.0.0.1"), ip), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := srv.Stop(); err != nil {
				t.Errorf("stopping srv: %v", err)
			}
		}()
	}
	if in, err := live.load("dns"); err == nil {
		t.Errorf("loader with two instances: %v; want an error", in)
	}
	if in, err := live.load("http"); err != nil || in != nil {
		t.Errorf("loader for another server type: %v, %v; want nothing", in, err)
	}
}

// TestRunFromFile: a changed Corefile file is applied, one that fails to
// load is counted and never replaces the running one, and a missing file
// keeps the last good configuration serving.
func TestRunFromFile(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	port := testkit.FreeUDPTCPPort(t, "127.0.0.1")
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	path := filepath.Join(t.TempDir(), "Corefile")
	write := func(s string) {
		t.Helper()
		// Write and rename, as editors and ConfigMap volumes do, so the
		// reader never sees half a file.
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	write(hostsCorefile(port, "192.0.2.1"))
	failures0 := failures(t)
	done := make(chan error, 1)
	go func() { done <- RunFromFile(ctx, path, 50*time.Millisecond, nil) }()
	waitAnswer(t, addr, "192.0.2.1")

	write(hostsCorefile(port, "192.0.2.2"))
	waitAnswer(t, addr, "192.0.2.2")

	write(fmt.Sprintf(".:%d {\n    bind 127.0.0.1\n    nosuchplugin\n}\n", port))
	testkit.PollEvery(t, "the broken Corefile counted", 50*time.Millisecond, 10*time.Second, func(context.Context) (bool, error) {
		return failures(t) != failures0, nil
	})
	if got := hostsAnswer(addr); got != "192.0.2.2" {
		t.Errorf("after a broken Corefile a.example = %q, want the running 192.0.2.2", got)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if got := hostsAnswer(addr); got != "192.0.2.2" {
		t.Errorf("with the file gone a.example = %q, want the running 192.0.2.2", got)
	}
	write(hostsCorefile(port, "192.0.2.3"))
	waitAnswer(t, addr, "192.0.2.3")

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("RunFromFile: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("RunFromFile did not return after cancel")
	}
	if got := hostsAnswer(addr); got != "" {
		t.Errorf("still answering after cancel: %q", got)
	}
}

func TestRunFromFileErrors(t *testing.T) {
	ctx := context.Background()
	if err := RunFromFile(ctx, filepath.Join(t.TempDir(), "missing"), 0, nil); err == nil {
		t.Error("missing file: no error")
	}
	path := filepath.Join(t.TempDir(), "Corefile")
	if err := os.WriteFile(path, []byte(".:0 {\n    nosuchplugin\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := RunFromFile(ctx, path, 0, nil); err == nil {
		t.Error("broken first Corefile: no error")
	}
}
