//go:build linux

package residency

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// releaseExecutable unmaps the pages of every read-only mapping of the
// running executable with MADV_DONTNEED.
func releaseExecutable() (Report, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return Report{}, fmt.Errorf("finding the executable: %w", err)
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return Report{}, fmt.Errorf("reading the process's mappings: %w", err)
	}
	regions, err := readOnlyMappings(maps, exe)
	if err != nil {
		return Report{}, err
	}
	var r Report
	for _, m := range regions {
		// The kernel drops the page-table entries only: the file's pages
		// stay in the page cache, and the next touch maps them again.
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, uintptr(m.start), uintptr(m.end-m.start), unix.MADV_NOHUGEPAGE); errno != 0 {
			return r, fmt.Errorf("madvise %x-%x: %w", m.start, m.end, errno)
		}
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, uintptr(m.start), uintptr(m.end-m.start), unix.MADV_DONTNEED); errno != 0 {
			return r, fmt.Errorf("madvise %x-%x: %w", m.start, m.end, errno)
		}
		r.Mappings++
		r.Bytes += int64(m.end - m.start)
	}
	return r, nil
}

type mapping struct{ start, end uint64 }

// readOnlyMappings parses /proc/self/maps (proc(5)) and returns the
// mappings of the file path whose permissions allow no write.
func readOnlyMappings(maps []byte, path string) ([]mapping, error) {
	var out []mapping
	sc := bufio.NewScanner(bytes.NewReader(maps))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		// address perms offset dev inode pathname
		f := strings.Fields(sc.Text())
		if len(f) < 6 || strings.Join(f[5:], " ") != path {
			continue
		}
		if len(f[1]) < 4 || f[1][1] != '-' {
			continue // writable (or malformed): never drop its pages
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			return nil, fmt.Errorf("mapping %q: want START-END", f[0])
		}
		start, err := strconv.ParseUint(lo, 16, 64)
		if err != nil {
			return nil, fmt.Errorf("mapping %q: %w", f[0], err)
		}
		end, err := strconv.ParseUint(hi, 16, 64)
		if err != nil {
			return nil, fmt.Errorf("mapping %q: %w", f[0], err)
		}
		if end <= start {
			return nil, fmt.Errorf("mapping %q: end before start", f[0])
		}
		out = append(out, mapping{start, end})
	}
	return out, sc.Err()
}

// vmRSS is the process's resident set in bytes, 0 when unknown.
func vmRSS() int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}
