package hostresolv

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParse holds kubelet's TestParseResolvConf rows (k/k
// pkg/kubelet/network/dns/dns_test.go, numbered #1-#13 in their order; #13
// is "search ." as kubernetes/kubernetes#112157 made it) and dnsplane's
// additions.
func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Config
		wantErr string
	}{
		{"#1 empty", "", Config{}, ""},
		{"#1 space", " ", Config{}, ""},
		{"#1 newline", "\n", Config{}, ""},
		{"#1 comment", "#comment\n", Config{}, ""},
		{"#1 indented comment", " #comment\n", Config{}, ""},
		{"#2 nameserver without value", "#comment\nnameserver", Config{},
			`line 2: nameserver list is empty: "nameserver" needs an address`},
		{"#3 empty search", "#comment\nnameserver 1.2.3.4\nsearch", Config{Nameservers: []string{"1.2.3.4"}}, ""},
		{"#4 inner whitespace", "nameserver \t 1.2.3.4", Config{Nameservers: []string{"1.2.3.4"}}, ""},
		{"#4 leading tab", "\tnameserver 1.2.3.4", Config{Nameservers: []string{"1.2.3.4"}}, ""},
		{"#5 nameservers accumulate", "nameserver 1.2.3.4\nnameserver 5.6.7.8",
			Config{Nameservers: []string{"1.2.3.4", "5.6.7.8"}}, ""},
		{"#6 trailing comment", "nameserver 1.2.3.4 #comment", Config{Nameservers: []string{"1.2.3.4"}}, ""},
		{"#7 trailing dot trimmed", "search foo. bar", Config{Searches: []string{"foo", "bar"}}, ""},
		{"#8 last search wins", "search foo\nsearch bar", Config{Searches: []string{"bar"}}, ""},
		{"#9 mixed", "nameserver 1.2.3.4\nsearch foo\nnameserver 5.6.7.8\nsearch bar",
			Config{Nameservers: []string{"1.2.3.4", "5.6.7.8"}, Searches: []string{"bar"}}, ""},
		{"#10 comments and unknown keyword", "#comment\nnameserver 1.2.3.4\n#comment\nsearch foo\ncomment",
			Config{Nameservers: []string{"1.2.3.4"}, Searches: []string{"foo"}}, ""},
		{"#11 options", "options ndots:5 attempts:2", Config{Options: []string{"ndots:5", "attempts:2"}}, ""},
		{"#12 options lines merge", "options ndots:1\noptions ndots:5 attempts:3",
			Config{Options: []string{"ndots:5", "attempts:3"}}, ""},
		{"#13 bare dot dropped", "search .", Config{}, ""},

		{"bare dot among others", "search . foo.", Config{Searches: []string{"foo"}}, ""},
		{"only one dot trimmed", "search foo..", Config{Searches: []string{"foo."}}, ""},
		{"double dot is not bare", "search ..", Config{Searches: []string{"."}}, ""},
		{"options merge keeps first position, last value",
			"options a:1 b\noptions c:3 a:2\noptions b:9",
			Config{Options: []string{"a:2", "b:9", "c:3"}}, ""},
		{"option text kept verbatim", "options timeout: rotate", Config{Options: []string{"timeout:", "rotate"}}, ""},
		{"empty options line changes nothing", "options ndots:2\noptions", Config{Options: []string{"ndots:2"}}, ""},
		{"domain and others ignored", "domain example.com\nsortlist 10.0.0.0/8\nlookup file bind\nnameserver 10.0.0.1",
			Config{Nameservers: []string{"10.0.0.1"}}, ""},
		{"semicolon is not a comment", "; comment\nnameserver 10.0.0.1", Config{Nameservers: []string{"10.0.0.1"}}, ""},
		{"CRLF", "nameserver 10.0.0.1\r\nsearch a.example\r\n",
			Config{Nameservers: []string{"10.0.0.1"}, Searches: []string{"a.example"}}, ""},
		{"every bad line reported", "nameserver\nnameserver 1.1.1.1\n  nameserver  \n",
			Config{}, `line 1: nameserver list is empty: "nameserver" needs an address; line 3: nameserver list is empty: "nameserver" needs an address`},
		{"NUL byte", "nameserver 1.1.1.1\nsearch a\x00b\n", Config{},
			"line 2: not a text file: NUL byte at column 9"},
		{"NUL in a comment", "# \x00\n", Config{}, "line 1: not a text file: NUL byte at column 3"},
		{"invalid UTF-8", "nameserver 1.1.1.1\n\nsearch \xff\xfe\n", Config{}, "line 3: not a text file: invalid UTF-8"},
		{"UTF-8 is text", "search bücher.example", Config{Searches: []string{"bücher.example"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				assertConfig(t, got, Config{})
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			assertConfig(t, got, tt.want)
		})
	}
}

// genReader produces n bytes of valid resolv.conf comment lines without
// holding them, so the size tests allocate only what Parse itself reads.
type genReader struct {
	n   int64
	off int64
}

const genLine = "# generated padding line\n"

func (g *genReader) Read(p []byte) (int, error) {
	if g.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > g.n {
		p = p[:g.n]
	}
	for i := range p {
		p[i] = genLine[(g.off+int64(i))%int64(len(genLine))]
	}
	g.off += int64(len(p))
	g.n -= int64(len(p))
	return len(p), nil
}

func TestParseSizeLimit(t *testing.T) {
	if _, err := Parse(&genReader{n: MaxFileSize}); err != nil {
		t.Fatalf("exactly MaxFileSize: %v", err)
	}
	_, err := Parse(&genReader{n: MaxFileSize + 1})
	if err == nil || !strings.Contains(err.Error(), "10485760-byte (10 MiB) limit") {
		t.Fatalf("MaxFileSize+1: err = %v, want the limit named", err)
	}
}

type failReader struct{}

func (failReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestParseReadError(t *testing.T) {
	_, err := Parse(failReader{})
	if err == nil || err.Error() != "reading resolv.conf: disk on fire" {
		t.Fatalf("err = %v", err)
	}
}

func TestParseFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.conf")
	if err := os.WriteFile(good, []byte("nameserver 8.8.8.8\nsearch host.domain\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := ParseFile(good)
	if err != nil {
		t.Fatal(err)
	}
	assertConfig(t, c, Config{Nameservers: []string{"8.8.8.8"}, Searches: []string{"host.domain"}})

	bad := filepath.Join(dir, "bad.conf")
	if err := os.WriteFile(bad, []byte("search a\nnameserver\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = ParseFile(bad)
	want := bad + `: line 2: nameserver list is empty: "nameserver" needs an address`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}

	missing := filepath.Join(dir, "missing.conf")
	_, err = ParseFile(missing)
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Fatalf("err = %v, want not-exist naming %s", err, missing)
	}
}
