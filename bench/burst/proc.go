package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat:
// 100 on every Linux architecture Go supports (proc(5)).
const clockTicks = 100

type proc struct {
	name string
	pid  int
}

// cpuTicks is utime+stime of /proc/PID/stat.
func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStat(b)
}

// parseStat reads utime and stime (fields 14 and 15) from a
// /proc/PID/stat line. The command name (field 2) is in parentheses and
// may hold spaces and parentheses, so fields are counted after the last
// ')'.
func parseStat(b []byte) (int64, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("stat: no ')'")
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state): utime is field 14, f[11].
	if len(f) < 13 {
		return 0, errors.New("stat: too few fields")
	}
	u, err1 := strconv.ParseInt(string(f[11]), 10, 64)
	s, err2 := strconv.ParseInt(string(f[12]), 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("stat: %w", err)
	}
	return u + s, nil
}

// rssKiB is VmRSS of /proc/PID/status.
func rssKiB(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return parseVMRSS(b)
}

func parseVMRSS(b []byte) (int64, error) {
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		rest, ok := bytes.CutPrefix(line, []byte("VmRSS:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, fmt.Errorf("status: VmRSS %q", rest)
		}
		return strconv.ParseInt(string(f[0]), 10, 64)
	}
	return 0, errors.New("status: no VmRSS")
}

// sampler follows procs' CPU and RSS from its start to stop.
type sampler struct {
	procs    []proc
	cpu0     []int64
	rss0     []int64
	mu       sync.Mutex
	rssMax   []int64
	done     chan struct{}
	finished chan struct{}
}

func startSampler(procs []proc) *sampler {
	s := &sampler{procs: procs, cpu0: make([]int64, len(procs)), rss0: make([]int64, len(procs)),
		rssMax: make([]int64, len(procs)), done: make(chan struct{}), finished: make(chan struct{})}
	for i, p := range procs {
		s.cpu0[i], _ = cpuTicks(p.pid)
		s.rss0[i], _ = rssKiB(p.pid)
		s.rssMax[i] = s.rss0[i]
	}
	go func() {
		defer close(s.finished)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-s.done:
				return
			case <-t.C:
				s.sample()
			}
		}
	}()
	return s
}

func (s *sampler) sample() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, p := range s.procs {
		if r, err := rssKiB(p.pid); err == nil && r > s.rssMax[i] {
			s.rssMax[i] = r
		}
	}
}

// stop ends the sampling and writes a `proc` line per process: CPU
// seconds since the start, VmRSS at the start, the largest VmRSS seen and
// VmRSS now, in MiB.
func (s *sampler) stop(w io.Writer) {
	close(s.done)
	<-s.finished
	s.sample()
	for i, p := range s.procs {
		cpu, err1 := cpuTicks(p.pid)
		rss, err2 := rssKiB(p.pid)
		if err := errors.Join(err1, err2); err != nil {
			fmt.Fprintf(os.Stderr, "burst: %s (pid %d): %v\n", p.name, p.pid, err)
			fmt.Fprintf(w, "proc %s cpu_s - rss_before_mib - rss_max_mib - rss_end_mib -\n", p.name)
			continue
		}
		fmt.Fprintf(w, "proc %s cpu_s %.2f rss_before_mib %.1f rss_max_mib %.1f rss_end_mib %.1f\n", p.name,
			float64(cpu-s.cpu0[i])/clockTicks, float64(s.rss0[i])/1024, float64(s.rssMax[i])/1024, float64(rss)/1024)
	}
}
