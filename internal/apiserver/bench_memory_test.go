package apiserver

// BenchmarkProbeListsAndStuckWatches reproduces issue 29's memory probe at
// full scale, in process (the embedded etcd included, as in up): a
// namespace of 20,000 ConfigMaps (28 MB), 20 watches of it whose clients
// never read, then 24 concurrent unlimited lists of it, all by one user
// who is not in system:masters (alice, impersonated by the admin; the
// per-user limits count the impersonated user). It reports the peak of
// the process's RSS (VmHWM, reset before the run) and of its heap above
// the start, how long the lists took, how many 429s they got (retried
// after Retry-After, as client-go does), the slowest /livez meanwhile,
// and how long a graceful stop took with the stuck watches open. Not run by go test unless -bench asks:
//
//	go test -run '^$' -bench ProbeListsAndStuckWatches -benchtime 1x -timeout 30m ./internal/apiserver/

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/dnsplane/dnsplane/internal/apiserver/filters"
)

const (
	probeConfigMaps = 20000
	probeSize       = 1400 // 28 MB in all
	probeLists      = 24
	probeWatches    = 20
	probeUser       = "alice"
)

func BenchmarkProbeListsAndStuckWatches(b *testing.B) {
	run, cfg := startMemoryServer(b, filters.DefaultLimits())
	stored := fillConfigMaps(b, run.Server, "default", probeConfigMaps, probeSize)
	b.Logf("stored %d ConfigMaps, %.1f MB", probeConfigMaps, float64(stored)/(1<<20))
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := listAs(ctx, hc, run.URL, "", nil); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		resetPeakRSS(b)
		stop := heapPeak(-1)
		var conns []net.Conn
		for range probeWatches {
			conns = append(conns, stuckWatch(b, ctx, run.URL, cfg, "default", probeUser))
		}
		// The process keeps answering meanwhile: the slowest /livez.
		probeCtx, stopProbe := context.WithCancel(ctx)
		slowest := make(chan time.Duration, 1)
		go func() { slowest <- slowestLivez(probeCtx, hc, run.URL) }()
		start := time.Now()
		var wg sync.WaitGroup
		var throttled atomic.Int64
		errs := make(chan error, probeLists)
		for range probeLists {
			wg.Go(func() {
				if _, err := listAs(ctx, hc, run.URL, probeUser, &throttled); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		listed := time.Since(start)
		stopProbe()
		b.ReportMetric(float64((<-slowest).Milliseconds()), "max-livez-ms")
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		// The stuck watches have had the lists' time to pile up.
		peak := stop()
		rss := peakRSS(b)
		b.ReportMetric(float64(rss)/(1<<20), "peak-RSS-MB")
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		b.ReportMetric(listed.Seconds(), "lists-s")
		b.ReportMetric(float64(throttled.Load()), "429s")
		b.ReportMetric(float64(configMapWatchers(b, run.Server)), "watches-open")
		stopStart := time.Now()
		stopCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := run.Stop(stopCtx)
		cancel()
		b.ReportMetric(time.Since(stopStart).Seconds(), "stop-s")
		if err != nil {
			b.Logf("stop: %v", err)
		}
		for _, c := range conns {
			c.Close()
		}
	}
}

// listAs lists the ConfigMaps of default as user (impersonated; "" is the
// admin itself), retrying 429s after their Retry-After as client-go does,
// and counting them in throttled.
func listAs(ctx context.Context, hc *http.Client, url, user string, throttled *atomic.Int64) (int64, error) {
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/api/v1/namespaces/default/configmaps", nil)
		if err != nil {
			return 0, err
		}
		if user != "" {
			req.Header.Set("Impersonate-User", user)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		if resp.StatusCode == http.StatusTooManyRequests {
			throttled.Add(1)
			secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			resp.Body.Close()
			time.Sleep(time.Duration(max(secs, 1)) * time.Second) // client-go's wait
			continue
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			body, _ := io.ReadAll(resp.Body)
			return 0, fmt.Errorf("list: %s %s", resp.Status, body)
		}
		return io.Copy(io.Discard, resp.Body)
	}
}

// slowestLivez gets /livez every 100ms until ctx ends and returns the
// longest answer (a failed one counts as the time it took to fail).
func slowestLivez(ctx context.Context, hc *http.Client, url string) time.Duration {
	var slowest time.Duration
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return slowest
		case <-tick.C:
		}
		start := time.Now()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/livez", nil)
		if err != nil {
			return slowest
		}
		if resp, err := hc.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if ctx.Err() == nil {
			slowest = max(slowest, time.Since(start))
		}
	}
}

// resetPeakRSS resets the process's VmHWM (Linux: clear_refs 5).
func resetPeakRSS(b *testing.B) {
	b.Helper()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Logf("cannot reset the peak RSS (%v): it is the process's since start", err)
	}
}

// peakRSS is the process's VmHWM in bytes.
func peakRSS(b *testing.B) uint64 {
	b.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatal("no VmHWM in /proc/self/status")
	return 0
}
