package hostresolv

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzParse: Parse never panics, and what it accepts survives being written
// back as a resolv.conf and parsed again. Search entries are the one
// exception kubelet's rules make: one trailing dot is trimmed per parse, so
// "foo.." reads as "foo." and then as "foo"; the check applies the
// search-line rule once more for them.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"", "#comment\nnameserver", "nameserver 1.2.3.4\nsearch foo. bar\noptions ndots:5 attempts:2\noptions ndots:1",
		"search .", "search foo.. ..", "options a: :b a:1\n", "\tnameserver \t 1.2.3.4 #c\r\n", "domain x\nsortlist y",
		"search a\x00", "search \xff", "nameserver\u0085x\nsearch\u00a0a",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(bytes.NewReader(data))
		if err != nil {
			return
		}
		out := render(c)
		again, err := Parse(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("re-parse of %q: %v", out, err)
		}
		if !sameList(again.Nameservers, c.Nameservers) {
			t.Fatalf("nameservers %q -> %q via %q", c.Nameservers, again.Nameservers, out)
		}
		if want := parseSearch(c.Searches); !sameList(again.Searches, want) {
			t.Fatalf("searches %q -> %q via %q", c.Searches, again.Searches, out)
		}
		if !sameList(again.Options, c.Options) {
			t.Fatalf("options %q -> %q via %q", c.Options, again.Options, out)
		}
	})
}

// render writes c in the layout container runtimes use. It is a test helper
// rather than API: this package only reads files; writing a pod's file is
// internal/resolvconf's job (Config.Render), which has its own tests.
func render(c Config) []byte {
	var b bytes.Buffer
	if len(c.Searches) > 0 {
		b.WriteString("search " + strings.Join(c.Searches, " ") + "\n")
	}
	for _, ns := range c.Nameservers {
		b.WriteString("nameserver " + ns + "\n")
	}
	if len(c.Options) > 0 {
		b.WriteString("options " + strings.Join(c.Options, " ") + "\n")
	}
	return b.Bytes()
}
