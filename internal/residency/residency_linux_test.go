//go:build linux

package residency

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestReadOnlyMappings(t *testing.T) {
	t.Parallel()
	const exe = "/usr/bin/dnsplane"
	maps := strings.Join([]string{
		"00400000-03008000 r-xp 00000000 fe:00 9986259                            /usr/bin/dnsplane",
		"03008000-06461000 r--p 02c08000 fe:00 9986259                            /usr/bin/dnsplane",
		"06461000-06546000 rw-p 06061000 fe:00 9986259                            /usr/bin/dnsplane",
		"06546000-0857a000 rw-p 00000000 00:00 0",
		"c000000000-c000400000 rw-p 00000000 00:00 0",
		"7f0000000000-7f0000001000 r--p 00000000 fe:00 1                          /usr/bin/dnsplane-other",
		"7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]",
	}, "\n")
	tests := []struct {
		name    string
		maps    string
		path    string
		want    []mapping
		wantErr bool
	}{
		{"code and read-only data, never the writable data", maps, exe, []mapping{{0x400000, 0x3008000}, {0x3008000, 0x6461000}}, false},
		{"a replaced executable", "00400000-00401000 r-xp 00000000 fe:00 1 /x/dnsplane (deleted)", "/x/dnsplane (deleted)", []mapping{{0x400000, 0x401000}}, false},
		{"no mapping of the file", maps, "/bin/sh", nil, false},
		{"empty", "", exe, nil, false},
		{"bad range", "zz-03008000 r-xp 00000000 fe:00 1 /usr/bin/dnsplane", exe, nil, true},
		{"end before start", "03008000-00400000 r-xp 00000000 fe:00 1 /usr/bin/dnsplane", exe, nil, true},
		{"no dash", "03008000 r-xp 00000000 fe:00 1 /usr/bin/dnsplane", exe, nil, true},
		{"short permissions are skipped", "00400000-00401000 r 00000000 fe:00 1 /usr/bin/dnsplane", exe, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := readOnlyMappings([]byte(tt.maps), tt.path)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %x, want %x", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("mapping %d = %x, want %x", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func FuzzReadOnlyMappings(f *testing.F) {
	f.Add([]byte("00400000-03008000 r-xp 00000000 fe:00 9986259 /bin/x\n"), "/bin/x")
	f.Add([]byte("ffffffffffffffff-0 r--p 0 0 0 /bin/x"), "/bin/x")
	f.Fuzz(func(t *testing.T, maps []byte, path string) {
		got, err := readOnlyMappings(maps, path)
		if err != nil {
			return
		}
		for _, m := range got {
			if m.end <= m.start {
				t.Fatalf("mapping %x: end not after start", m)
			}
		}
	})
}

// executableRSS sums the Rss of the test binary's read-only mappings.
func executableRSS(t *testing.T) int64 {
	t.Helper()
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	inExe := false
	for _, line := range strings.Split(string(smaps), "\n") {
		f := strings.Fields(line)
		if len(f) >= 6 && strings.Contains(f[0], "-") {
			inExe = strings.Join(f[5:], " ") == exe && f[1][1] == '-'
			continue
		}
		if inExe && len(f) == 3 && f[0] == "Rss:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			total += kb << 10
		}
	}
	return total
}

// Not parallel: it measures the whole process.
func TestReleaseUnmapsTheExecutable(t *testing.T) {
	before := executableRSS(t)
	r, err := Release()
	if err != nil {
		t.Fatal(err)
	}
	after := executableRSS(t)
	if r.Mappings < 1 || r.Bytes <= 0 {
		t.Fatalf("Release = %+v, want the executable's read-only mappings", r)
	}
	// What this goroutine touched since (the test's own code, the
	// runtime's tables for its stack) comes back; package init's pages
	// do not.
	if after >= before {
		t.Errorf("executable's resident read-only pages %d kB → %d kB, want fewer", before>>10, after>>10)
	}
	t.Logf("read-only pages of the executable: %d kB → %d kB; VmRSS %d kB → %d kB", before>>10, after>>10, r.RSSBefore>>10, r.RSSAfter>>10)
}
