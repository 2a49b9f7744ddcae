package portowner

import (
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Rows as the kernel writes them (trimmed columns after the inode).
const tcpTable = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:0035 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1111 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 2222 1 0000000000000000 20 4 30 10 -1
   2: 00000000:01BB 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 3333 1 0000000000000000 100 0 0 10 0
`

const tcp6Table = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:1A0B 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4444 1 0000000000000000 100 0 0 10 0
`

func TestParseTable(t *testing.T) {
	t.Parallel()
	socks, err := ParseTable([]byte(tcpTable))
	if err != nil {
		t.Fatal(err)
	}
	want := []Socket{
		{netip.MustParseAddrPort("127.0.0.1:53"), 0x0A, 1111},
		{netip.MustParseAddrPort("127.0.0.1:8080"), 0x01, 2222},
		{netip.MustParseAddrPort("0.0.0.0:443"), 0x0A, 3333},
	}
	if len(socks) != len(want) {
		t.Fatalf("got %v, want %v", socks, want)
	}
	for i := range want {
		if socks[i] != want[i] {
			t.Errorf("row %d: %+v, want %+v", i, socks[i], want[i])
		}
	}
	six, err := ParseTable([]byte(tcp6Table))
	if err != nil || len(six) != 1 || six[0].Local != netip.MustParseAddrPort("[::1]:6667") {
		t.Errorf("tcp6: %v, %v; want [::1]:6667", six, err)
	}
	for _, bad := range []string{"h\n 0: 0100007F 00000000:0000 0A a a a a a 1\n", "h\n 0: 0100007:0035 x 0A a a a a a 1\n", "h\n 0: 0100007F:0035 x ZZ a a a a a 1\n", "h\n 0: 0100007F:0035 x 0A a a a a a x\n", "h\n 0: short\n"} {
		if _, err := ParseTable([]byte(bad)); err == nil {
			t.Errorf("ParseTable(%q): no error", bad)
		}
	}
}

func FuzzParseTable(f *testing.F) {
	f.Add([]byte(tcpTable))
	f.Add([]byte(tcp6Table))
	f.Fuzz(func(t *testing.T, data []byte) {
		socks, err := ParseTable(data)
		if err != nil {
			return
		}
		for _, s := range socks {
			if !s.Local.IsValid() {
				t.Errorf("invalid address parsed from %q", data)
			}
		}
	})
}

// fakeProc is a /proc tree with the socket tables and processes given.
func fakeProc(t *testing.T, tables map[string]string, procs map[int]struct {
	comm   string
	inodes []string
}) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "net"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range tables {
		if err := os.WriteFile(filepath.Join(root, "net", name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for pid, p := range procs {
		dir := filepath.Join(root, strconv.Itoa(pid))
		if err := os.MkdirAll(filepath.Join(dir, "fd"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "comm"), []byte(p.comm+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for i, ino := range p.inodes {
			if err := os.Symlink(ino, filepath.Join(dir, "fd", strconv.Itoa(i+3))); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

func TestFind(t *testing.T) {
	t.Parallel()
	proc := fakeProc(t, map[string]string{"tcp": tcpTable, "tcp6": tcp6Table}, map[int]struct {
		comm   string
		inodes []string
	}{
		612: {"systemd-resolve", []string{"/dev/null", "socket:[1111]"}},
		700: {"nginx", []string{"socket:[3333]", "pipe:[5]"}},
		701: {"nginx", []string{"socket:[3333]"}},
		800: {"client", []string{"socket:[2222]"}},
		900: {"ircd", []string{"socket:[4444]"}},
	})
	f := Finder{Proc: proc}
	tests := []struct {
		addr string
		want string
	}{
		{"127.0.0.1:53", "[systemd-resolve, pid 612]"},
		{"127.0.0.2:443", "[nginx, pid 700 nginx, pid 701]"}, // wildcard holds every address
		{"127.0.0.1:8080", "[]"},                             // a connection, not a listener
		{"[::1]:6667", "[ircd, pid 900]"},
		{"127.0.0.1:54", "[]"},
	}
	for _, tt := range tests {
		var b strings.Builder
		b.WriteString("[")
		for i, o := range f.Find("tcp", netip.MustParseAddrPort(tt.addr)) {
			if i > 0 {
				b.WriteString(" ")
			}
			b.WriteString(o.String())
		}
		b.WriteString("]")
		if b.String() != tt.want {
			t.Errorf("Find(%s) = %s, want %s", tt.addr, b.String(), tt.want)
		}
	}
}

// TestDescribeSelf finds this test process holding a UDP port, from the
// real /proc.
func TestDescribeSelf(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/net/udp"); err != nil {
		t.Skip("no /proc/net/udp:", err)
	}
	pc, err := net.ListenPacket("udp", "127.0.53.77:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	got := Describe(pc.LocalAddr().String(), "udp", "tcp")
	comm, _ := os.ReadFile("/proc/self/comm")
	want := strings.TrimSpace(string(comm)) + ", pid " + strconv.Itoa(os.Getpid())
	if got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
	if got := Parenthesized(pc.LocalAddr().String(), "udp"); got != " ("+want+")" {
		t.Errorf("Parenthesized = %q, want %q", got, " ("+want+")")
	}
	if got := Parenthesized("127.0.53.77:1", "udp"); got != "" {
		t.Errorf("Parenthesized of a port no one holds = %q, want empty", got)
	}
}
