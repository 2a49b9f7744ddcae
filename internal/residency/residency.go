// Package residency gives back to the kernel, once a long-running data-plane
// process has started, the memory that only its start-up used: pages of the
// executable mapped by package initialisation and the heap start-up left as
// garbage.
//
// `dnsplane dns` and `dnsplane nodecache` run the same binary as the API
// server, so every package init of the control plane runs in them too
// (docs/operations.md, "Memory of the data plane"). Those inits touch code
// and read-only tables spread across the whole binary, and Linux maps up to
// fault_around_bytes (64 KiB) around every page faulted from the page cache,
// so most of the binary stays mapped, and counted in the process's RSS,
// although the DNS path never runs that code again. Release unmaps the
// executable's read-only mappings: the pages stay in the page cache (shared
// with every other process of the binary, reclaimable) and the ones the
// server still uses are mapped again on first touch, so the resident set
// afterwards is what serving DNS uses.
package residency

import (
	"runtime/debug"
)

// Report is what Release gave back.
type Report struct {
	// Mappings is the number of read-only mappings of the executable
	// unmapped; Bytes their total size (mapped or not).
	Mappings int
	Bytes    int64
	// RSSBefore and RSSAfter are VmRSS in bytes, when the platform reports
	// it (0 otherwise).
	RSSBefore, RSSAfter int64
}

// Release returns the start-up garbage of the Go heap to the kernel and
// unmaps the executable's read-only pages (code, read-only data, the
// runtime's tables), which are mapped again on demand. It never touches a
// writable mapping: dropping a written page of a private file mapping would
// reset it to the file's content. On platforms other than Linux it only
// frees the heap.
func Release() (Report, error) {
	before := vmRSS()
	// FreeOSMemory runs a GC first: the init-time garbage (schemes,
	// regexps, descriptors built and dropped) goes back too.
	debug.FreeOSMemory()
	r, err := releaseExecutable()
	r.RSSBefore = before
	r.RSSAfter = vmRSS()
	return r, err
}
