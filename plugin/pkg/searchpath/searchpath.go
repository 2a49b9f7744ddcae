// Package searchpath is the autopath wire format shared by the node cache's
// searchopt plugin and the cluster DNS's searchexpand plugin (docs/autopath.md,
// "The wire format"):
//
//   - a pod with dnsPolicy ClusterFirstWithAutopath has the single search
//     path search.<namespace>.<cluster-domain>.ap.k8s.io, so a short name
//     reaches the node cache as <base>.search.<ns>.<cluster-domain>.ap.k8s.io.;
//   - the node cache attaches an EDNS0 local option (default code 65534)
//     whose value is the search list to try, ASCII, comma-separated, without
//     trailing dots, in expansion order.
//
// Both ends parse untrusted input here (query names, option values), so every
// function bounds its work and returns an error instead of panicking.
package searchpath

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Zone is the suffix that marks a query for server-side expansion.
const Zone = "ap.k8s.io."

// DefaultOptionCode is the EDNS0 option code, from the local/experimental
// range (65001–65534).
const DefaultOptionCode uint16 = 65534

// Limits on a search list, the same as pod dnsConfig's (32 entries, 2048
// characters joined), so expansion work per query is bounded.
const (
	MaxEntries = 32
	MaxChars   = 2048
)

// searchLabel separates the base name from the namespace in a query name.
const searchLabel = "search"

// Name is a parsed autopath query name.
type Name struct {
	// Base is the name the application asked for, without a trailing dot
	// (e.g. "svc1" or "svc1.ns2").
	Base string
	// Namespace is the querying pod's namespace.
	Namespace string
	// ClusterDomain is the cluster domain, without a trailing dot.
	ClusterDomain string
}

// Parse parses <base>.search.<ns>.<cluster-domain>.ap.k8s.io. for the given
// cluster domain. It reads right to left: the cluster domain is configured,
// so a base that itself contains a "search" label is not ambiguous. Matching
// is case-insensitive, as DNS is; Base keeps the case it was asked with.
// ok is false for names outside the zone or not of that shape.
func Parse(qname, clusterDomain string) (Name, bool) {
	cd := strings.TrimSuffix(clusterDomain, ".")
	if cd == "" || len(qname) > 255 {
		return Name{}, false
	}
	name := qname
	if !strings.HasSuffix(name, ".") {
		name += "."
	}
	rest, ok := cutSuffixFold(name, "."+cd+"."+Zone)
	if !ok {
		return Name{}, false
	}
	// rest is <base>.search.<ns>
	dot := strings.LastIndexByte(rest, '.')
	if dot < 0 {
		return Name{}, false
	}
	ns := rest[dot+1:]
	rest = rest[:dot]
	base, ok := cutSuffixFold(rest, "."+searchLabel)
	if !ok || base == "" || ns == "" || strings.HasPrefix(base, ".") || strings.Contains(base, "..") {
		return Name{}, false
	}
	return Name{Base: base, Namespace: strings.ToLower(ns), ClusterDomain: cd}, true
}

func cutSuffixFold(s, suffix string) (string, bool) {
	if len(s) < len(suffix) || !strings.EqualFold(s[len(s)-len(suffix):], suffix) {
		return s, false
	}
	return s[:len(s)-len(suffix)], true
}

// SearchName is the single search path a ClusterFirstWithAutopath pod gets.
func SearchName(namespace, clusterDomain string) string {
	return searchLabel + "." + namespace + "." + strings.TrimSuffix(clusterDomain, ".") + "." + strings.TrimSuffix(Zone, ".")
}

// Derived is the search list the cluster DNS uses when a query carries no
// option (the node cache is down or bypassed): the cluster part of a
// ClusterFirst pod's list. The node's host search paths are then not tried.
func Derived(namespace, clusterDomain string) []string {
	cd := strings.TrimSuffix(clusterDomain, ".")
	return []string{namespace + ".svc." + cd, "svc." + cd, cd}
}

// Encode returns the option value for a search list, after checking it as
// Decode does, so a node cache never sends what a cluster DNS would reject.
func Encode(list []string) ([]byte, error) {
	trimmed := make([]string, len(list))
	for i, s := range list {
		trimmed[i] = strings.TrimSuffix(s, ".")
	}
	value := strings.Join(trimmed, ",")
	if _, err := Decode([]byte(value)); err != nil {
		return nil, err
	}
	return []byte(value), nil
}

// Decode parses an option value: ASCII, comma-separated domains without
// trailing dots, at most MaxEntries entries and MaxChars bytes, each a
// valid domain name. An empty value is an empty list.
func Decode(value []byte) ([]string, error) {
	if len(value) > MaxChars {
		return nil, fmt.Errorf("search list option is %d bytes, more than %d", len(value), MaxChars)
	}
	if len(value) == 0 {
		return nil, nil
	}
	entries := strings.Split(string(value), ",")
	if len(entries) > MaxEntries {
		return nil, fmt.Errorf("search list option has %d entries, more than %d", len(entries), MaxEntries)
	}
	for i, e := range entries {
		if err := checkDomain(e); err != nil {
			return nil, fmt.Errorf("search list option entry %d %q: %w", i, e, err)
		}
	}
	return entries, nil
}

// checkDomain accepts host names and the underscore labels KEP-4427 allows
// in search paths: labels of 1–63 letters, digits, '-' or '_', not starting
// or ending with '-', 253 characters at most.
func checkDomain(s string) error {
	if s == "" {
		return errors.New("empty domain")
	}
	if len(s) > 253 {
		return errors.New("longer than 253 characters")
	}
	// Walk the labels without splitting: this runs for every entry of
	// every option the cluster DNS receives.
	for rest := s; ; {
		label, tail, more := strings.Cut(rest, ".")
		if label == "" {
			return errors.New("empty label")
		}
		if len(label) > 63 {
			return errors.New("label longer than 63 characters")
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return fmt.Errorf("label %q starts or ends with '-'", label)
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !labelByte(c) {
				return fmt.Errorf("label %q has the character %q", label, c)
			}
		}
		if !more {
			return nil
		}
		rest = tail
	}
}

// labelByte reports whether c may appear in a search path label: a letter,
// a digit, '-' or '_'.
func labelByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// InZone reports whether the fully qualified name is zone or below it,
// ignoring case, as dns.IsSubDomain does for names without escaped dots,
// but without allocating: it runs for every query and candidate.
func InZone(zone, name string) bool {
	if len(name) < len(zone) || !equalFoldASCII(name[len(name)-len(zone):], zone) {
		return false
	}
	return len(name) == len(zone) || zone == "." || name[len(name)-len(zone)-1] == '.'
}

// equalFoldASCII compares a and b byte by byte, folding only ASCII letters
// as DNS does (strings.EqualFold folds Unicode, and takes any two invalid
// UTF-8 bytes as equal).
func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	if a == b {
		// Names are mostly lower case already (the node cache and the
		// configuration normalise them): a memory compare settles it.
		return true
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x == y {
			// Most bytes match as they are: skip the folding.
			continue
		}
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// Candidates returns the names to try for base with the given search list,
// in order: each search domain appended, then the bare name last
// (docs/autopath.md), all fully qualified. A base that is already in one of the
// search domains still gets every candidate, as a resolver would.
func Candidates(base string, list []string) []string {
	out := make([]string, 0, len(list)+1)
	for i := range len(list) + 1 {
		out = append(out, Candidate(base, list, i))
	}
	return out
}

// Candidate returns Candidates(base, list)[i] without building the others.
func Candidate(base string, list []string, i int) string {
	base = strings.TrimSuffix(base, ".")
	if i == len(list) {
		return base + "."
	}
	return base + "." + strings.TrimSuffix(list[i], ".") + "."
}

// The EDNS0 local/experimental option code range a configured code must be
// in.
const (
	MinOptionCode uint16 = 65001
	MaxOptionCode uint16 = 65534
)

// ParseOptionCode parses a configured option code.
func ParseOptionCode(s string) (uint16, error) {
	code, err := strconv.ParseUint(s, 10, 16)
	if err != nil || code < uint64(MinOptionCode) || code > uint64(MaxOptionCode) {
		return 0, fmt.Errorf("code %q: want an EDNS0 local option code, %d-%d", s, MinOptionCode, MaxOptionCode)
	}
	return uint16(code), nil
}

// NormalizeDomain lower-cases a configured domain (a cluster domain or a
// host search domain), drops one trailing dot, and checks that it can travel
// in the option.
func NormalizeDomain(s string) (string, error) {
	d := strings.ToLower(strings.TrimSuffix(s, "."))
	if _, err := Encode([]string{d}); err != nil {
		return "", fmt.Errorf("%q: %w", s, err)
	}
	return d, nil
}
