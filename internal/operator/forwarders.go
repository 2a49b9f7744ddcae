package operator

import (
	"bytes"
	"net/netip"
	"strings"

	"github.com/coredns/caddy/caddyfile"

	"github.com/dnsplane/dnsplane/internal/operator/render"
)

// PublishedForwarders are the domains a published Corefile forwards, with
// their nameservers, as status.upstreams lists them: read from the
// Corefile the cluster DNS serves, not from the spec, so that a forwarder
// the Corefile left out (a TLS forwarder whose CA bundle is missing, an
// invalid forward plugin) or one only a rejected Corefile has is never
// listed as a healthy nameserver in use. Nil when nothing is published.
//
// It reads each server block's keys and the `forward FROM TO...` lines
// directly inside it, tokenised by caddy's own lexer (which neither
// imports files nor expands environment variables at this stage: the
// ConfigMap may have been edited by hand while Unmanaged). A TO that is
// not an address is a resolv.conf file, whose nameservers the cluster
// DNS's metrics name (render.Forwarder.ResolvConf).
func PublishedForwarders(corefile []byte) []render.Forwarder {
	if len(corefile) == 0 {
		return nil
	}
	d := caddyfile.NewDispenser("Corefile", bytes.NewReader(corefile))
	var (
		out   []render.Forwarder
		keys  []string
		depth int
		// dir is the directive of the line being read at depth 1, args
		// its arguments before a block opens; line is that line.
		dir  string
		args []string
		line = -1
		open bool
	)
	finish := func() {
		if dir == "forward" && len(args) >= 2 {
			for _, k := range keys {
				out = append(out, forwarderOf(zoneOf(k), args[1:]))
			}
		}
		dir, args, open = "", nil, false
	}
	for d.Next() {
		v, l := d.Val(), d.Line()
		switch {
		case v == "{":
			switch depth {
			case 0:
				line = -1 // a server block's first directive may share the line
			case 1:
				open = false // the directive's block: its options follow
			}
			depth++
		case v == "}":
			if depth == 1 {
				finish()
				keys = nil
			}
			if depth > 0 {
				depth--
			}
		case depth == 0:
			for k := range strings.SplitSeq(v, ",") {
				if k != "" {
					keys = append(keys, k)
				}
			}
		case depth == 1 && l != line:
			finish()
			dir, line, open = v, l, true
		case depth == 1 && open:
			args = append(args, v)
		}
	}
	return out
}

// zoneOf is the zone of a server block key: "foo.com:5353" and
// "dns://foo.com:5353" are "foo.com", ".:5353" is ".".
func zoneOf(key string) string {
	if _, rest, ok := strings.Cut(key, "://"); ok {
		key = rest
	}
	if i := strings.LastIndexByte(key, ':'); i >= 0 && isDigits(key[i+1:]) {
		key = key[:i]
	}
	key = strings.ToLower(strings.TrimSuffix(key, "."))
	if key == "" { // ".", or a key of only a port
		return "."
	}
	return key
}

// forwarderOf names the forward plugin's TOs as its metrics do: IP:PORT,
// with the transport's port (53, 853 for tls://) when a TO has none.
func forwarderOf(domain string, tos []string) render.Forwarder {
	f := render.Forwarder{Domain: domain}
	for _, to := range tos {
		port := uint16(53)
		if rest, ok := strings.CutPrefix(to, "tls://"); ok {
			to, port = rest, 853
		} else {
			to = strings.TrimPrefix(to, "dns://")
		}
		if ap, err := netip.ParseAddrPort(to); err == nil {
			f.Addresses = append(f.Addresses, ap.String())
		} else if a, err := netip.ParseAddr(strings.Trim(to, "[]")); err == nil {
			f.Addresses = append(f.Addresses, netip.AddrPortFrom(a, port).String())
		} else {
			f.ResolvConf = true
		}
	}
	return f
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
