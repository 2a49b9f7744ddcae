package resolvconf

import (
	"bytes"
	"strings"
)

// Order is the order of the lines of a rendered file. Resolvers read the
// three kinds of line independently, so the order only matters to people
// and tools comparing files.
type Order int

const (
	// RuntimeOrder is what containerd and CRI-O (and Docker before them)
	// write: search, nameserver lines, options.
	RuntimeOrder Order = iota
	// NameserverFirst is the layout the Custom policy's design shows
	// (kubernetes/community design-proposals/network/pod-resolv-conf.md;
	// docs/resolvconf.md, "Line order"):
	// nameserver lines, search, options.
	NameserverFirst
)

// Render returns the file in RuntimeOrder.
func (c Config) Render() []byte { return c.RenderOrder(RuntimeOrder) }

// RenderOrder returns the file with one "search" line, one "nameserver" line
// per server and one "options" line, each only when non-empty and each
// ending in "\n", in the given order.
func (c Config) RenderOrder(o Order) []byte {
	var b bytes.Buffer
	search := func() {
		if len(c.Searches) > 0 {
			b.WriteString("search " + strings.Join(c.Searches, " ") + "\n")
		}
	}
	if o == RuntimeOrder {
		search()
	}
	for _, ns := range c.Nameservers {
		b.WriteString("nameserver " + ns + "\n")
	}
	if o == NameserverFirst {
		search()
	}
	if len(c.Options) > 0 {
		b.WriteString("options " + strings.Join(c.Options, " ") + "\n")
	}
	return b.Bytes()
}
