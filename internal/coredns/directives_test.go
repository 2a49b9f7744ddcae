package coredns

import (
	"slices"
	"testing"

	"github.com/coredns/caddy"
)

func TestDirectivesOrder(t *testing.T) {
	d := Directives()
	idx := func(name string) int {
		t.Helper()
		i := slices.Index(d, name)
		if i < 0 {
			t.Fatalf("%s missing from Directives()", name)
		}
		return i
	}
	before := [][2]string{
		{"searchexpand", "cache"},
		{"searchopt", "cache"},
		{"searchopt", "forward"},
		{"autopath", "cache"},
		{"cache", "kubernetes"},
		{"kubernetes", "forward"},
		{"bind", "forward"},
		{"autopath", "loopguard"},
		{"searchexpand", "loopguard"},
		{"searchopt", "loopguard"},
		{"cache", "loopguard"},
		{"kubernetes", "loopguard"},
		{"loop", "loopguard"},
		{"loopguard", "forward"},
		{"warmstack", "prometheus"},
		{"warmstack", "errors"},
	}
	for _, p := range before {
		if idx(p[0]) >= idx(p[1]) {
			t.Errorf("%s must come before %s in %v", p[0], p[1], d)
		}
	}
	// Returned slices are copies.
	d[0] = "x"
	if Directives()[0] == "x" {
		t.Error("Directives() returned the package slice")
	}
}

// TestDirectivesKeepCoreDNSOrder checks that the stock plugins keep the
// relative order of CoreDNS v1.15.0's default list.
func TestDirectivesKeepCoreDNSOrder(t *testing.T) {
	stock := []string{"root", "metadata", "geoip", "cancel", "proxyproto", "quic", "grpc_server", "https", "https3", "timeouts", "multisocket", "reload", "nsid", "bufsize", "bind", "debug", "trace", "ready", "health", "pprof", "shed", "prometheus", "errors", "log", "dnstap", "local", "dns64", "siit", "any", "chaos", "loadbalance", "tsig", "rewrite", "autopath", "acl", "cache", "header", "dnssec", "tls", "minimal", "template", "transfer", "dynupdate", "hosts", "route53", "azure", "clouddns", "k8s_external", "kubernetes", "file", "auto", "secondary", "etcd", "loop", "forward", "grpc", "erratic", "whoami", "on", "sign", "view", "nomad"}
	last := -1
	for _, name := range Directives() {
		if name == "searchexpand" || name == "searchopt" || name == "loopguard" || name == "warmstack" {
			continue
		}
		i := slices.Index(stock, name)
		if i < 0 {
			t.Fatalf("%s is not a CoreDNS v1.15.0 directive", name)
		}
		if i < last {
			t.Errorf("%s is out of CoreDNS order", name)
		}
		last = i
	}
}

func TestDirectivesRegistered(t *testing.T) {
	want := []string{"errors", "log", "health", "ready", "prometheus", "kubernetes", "forward", "cache", "reload", "loop", "loadbalance", "bufsize", "rewrite", "hosts", "template", "chaos", "autopath", "bind", "searchexpand", "searchopt"}
	d := Directives()
	for _, name := range want {
		if !slices.Contains(d, name) {
			t.Errorf("%s missing from Directives()", name)
		}
		if _, err := caddy.DirectiveAction("dns", name); err != nil {
			t.Errorf("%s not registered: %v", name, err)
		}
	}
	for _, name := range d {
		if _, err := caddy.DirectiveAction("dns", name); err != nil {
			t.Errorf("directive %s has no registered plugin: %v", name, err)
		}
	}
}
