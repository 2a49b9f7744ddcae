//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"k8s.io/apimachinery/pkg/util/wait"
)

// TestDNSReleasesStartupPages runs `dnsplane dns` as its own process and
// checks that, serving, it keeps no more than a third of the executable's
// read-only pages mapped: package inits of the whole binary touch well over
// half of them (docs/operations.md, "Memory of the data plane"), and the
// command gives them back once the Corefile serves (internal/residency).
func TestDNSReleasesStartupPages(t *testing.T) {
	t.Parallel()
	conf, port := chaosCorefile(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "dns", "--conf", conf, "--log-level", "debug")
	cmd.Env = append(os.Environ(), asDnsplaneEnv+"=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()

	m := new(dns.Msg)
	m.SetQuestion("version.bind.", dns.TypeTXT)
	m.Question[0].Qclass = dns.ClassCHAOS
	c := &dns.Client{Timeout: time.Second}
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		_, _, err := c.Exchange(m, fmt.Sprintf("127.0.0.1:%d", port))
		return err == nil && strings.Contains(stderr.String(), "released start-up memory"), nil
	})
	if err != nil {
		t.Fatalf("dnsplane dns did not answer and release: %v (stderr: %s)", err, stderr.String())
	}
	if _, _, err := c.Exchange(m, fmt.Sprintf("127.0.0.1:%d", port)); err != nil {
		t.Fatalf("query after release: %v", err)
	}
	resident, size := readOnlyExecutable(t, cmd.Process.Pid, exe)
	t.Logf("read-only pages of the executable resident: %d of %d kB", resident>>10, size>>10)
	if resident*3 > size {
		t.Errorf("%d of %d kB of the executable's read-only pages resident, want at most a third", resident>>10, size>>10)
	}
}

// readOnlyExecutable sums the resident bytes and the sizes of the
// read-only mappings of exe in process pid.
func readOnlyExecutable(t *testing.T, pid int, exe string) (resident, size int64) {
	t.Helper()
	smaps, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		t.Fatal(err)
	}
	in := false
	for _, line := range strings.Split(string(smaps), "\n") {
		f := strings.Fields(line)
		if len(f) >= 6 && strings.Contains(f[0], "-") {
			in = strings.Join(f[5:], " ") == exe && len(f[1]) == 4 && f[1][1] == '-'
			continue
		}
		if !in || len(f) != 3 {
			continue
		}
		kb, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "Size:":
			size += kb << 10
		case "Rss:":
			resident += kb << 10
		}
	}
	if size == 0 {
		t.Fatalf("no read-only mapping of %s in process %d", exe, pid)
	}
	return resident, size
}
