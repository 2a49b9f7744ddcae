package searchpath

import "strings"

// Dedupe removes later duplicates from list, in place, and returns the
// shortened slice: entries are compared as domain names (ASCII case
// ignored, a trailing dot ignored) and the first occurrence is kept.
//
// Dropping a later duplicate never changes which candidate is found: the
// earlier copy names the same name and is asked first, so if it did not
// exist neither does the later one. Without this, an option with one domain
// repeated 32 times makes the cluster DNS ask the same name upstream 32
// times at once. It allocates nothing: it runs for every expanded query.
// The scan is quadratic, but an option holds at most MaxEntries entries
// and MaxChars bytes: at worst 496 comparisons of strings that differ only
// at the end, 15-20 µs (BenchmarkPrune in searchexpand), where a
// hash set would allocate and cost more on the usual 4 to 6 entries.
func Dedupe(list []string) []string {
	out := list[:0]
	for _, e := range list {
		if !containsDomain(out, e) {
			out = append(out, e)
		}
	}
	return out
}

func containsDomain(list []string, d string) bool {
	d = strings.TrimSuffix(d, ".")
	for _, e := range list {
		if equalFoldASCII(strings.TrimSuffix(e, "."), d) {
			return true
		}
	}
	return false
}

// CandidateInZone reports whether Candidate(base, []string{entry}, 0) —
// base.entry. — is zone or below it, without building the name: callers
// classify every entry of every search list with it. zone, base and entry
// are given without a trailing dot (one is ignored).
//
// It is not the same as asking whether entry is in zone: with the cluster
// domain cluster.local, the entry "local" and the base "svc1.ns1.svc.cluster"
// make a cluster name.
func CandidateInZone(zone, base, entry string) bool {
	zone = strings.TrimSuffix(zone, ".")
	base = strings.TrimSuffix(base, ".")
	entry = strings.TrimSuffix(entry, ".")
	if zone == "" {
		return true // the root: every name is in it
	}
	if len(entry) >= len(zone) {
		// The zone's labels all lie in entry.
		return InZone(zone, entry)
	}
	// zone is <rest>.<entry>, and the name is in it when base is in rest.
	return InZone(entry, zone) && InZone(zone[:len(zone)-len(entry)-1], base)
}
