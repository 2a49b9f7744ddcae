package pod

import (
	"net/url"
	"testing"
)

// FuzzParseExecOptions: any pods/exec query string is parsed or refused
// with a 400, never a panic, and what is accepted has a command, a stream
// and no stderr beside a tty.
func FuzzParseExecOptions(f *testing.F) {
	for _, s := range []string{
		"command=cat&command=/etc/resolv.conf&stdout=true&stderr=true",
		"command=sh&stdin=1&tty=true&stderr=true&container=app",
		"stdout=maybe&command=x",
		"command=&stdout=true",
		"%zz",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		o, err := parseExecOptions(q)
		if err != nil {
			return
		}
		if len(o.command) == 0 || (!o.stdin && !o.stdout && !o.stderr) || (o.tty && o.stderr) {
			t.Fatalf("accepted %q as %+v", raw, o)
		}
	})
}
