// Package dnsparams parses and expands the substitutions of
// spec.dnsParams.custom.search (dnsPolicy Custom, docs/pod-dns.md "Substitutions").
//
// A substitution replaces one whole DNS label: "$(NAMESPACE).svc.$(CLUSTER)"
// expands, "abc$(NAMESPACE)1234" is invalid. "$(HOST)" stands for the node's
// whole search list, so it must be a whole entry and the last one. The API
// server uses Check to validate, the node agent uses Expand to build the
// search line; both share one parser so they can never disagree.
package dnsparams

import (
	"fmt"
	"strings"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

// Values are what the substitutions expand to for one pod on one node.
type Values struct {
	Namespace     string   // $(NAMESPACE)
	ClusterDomain string   // $(CLUSTER), e.g. cluster.local
	HostSearch    []string // $(HOST), the node's search list
}

// placeholder stands in for a substituted label when an entry is validated as
// a domain: the real value is not known until the pod lands on a node, and
// any valid label keeps the rest of the entry's rules checkable.
const placeholder = "x"

// validList is the suffix of every message about an unknown token.
func validList() string {
	subs := dpcorev1.Substitutions()
	q := make([]string, len(subs))
	for i, s := range subs {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "valid substitutions are " + strings.Join(q, ", ")
}

// IsHost reports whether entry is the $(HOST) substitution.
func IsHost(entry string) bool { return entry == dpcorev1.SubstitutionHost }

// Check reports whether entry, at index i of a list of n entries, uses
// substitutions correctly. It does not validate the entry as a domain: see
// Placeholder for that.
func Check(entry string, i, n int) error {
	if IsHost(entry) {
		if i != n-1 {
			return fmt.Errorf("%q must be the last search entry", dpcorev1.SubstitutionHost)
		}
		return nil
	}
	for _, label := range strings.Split(entry, ".") {
		if err := checkLabel(entry, label); err != nil {
			return err
		}
	}
	return nil
}

func checkLabel(entry, label string) error {
	if label == dpcorev1.SubstitutionNamespace || label == dpcorev1.SubstitutionCluster {
		return nil
	}
	rest := label
	for {
		at := strings.IndexByte(rest, '$')
		if at < 0 {
			return nil
		}
		rest = rest[at:]
		tok, ok := token(rest)
		switch {
		case !ok:
			if name := bareName(rest[1:]); name != "" {
				return fmt.Errorf("%q is not a substitution: write \"$(%s)\"", "$"+name, name)
			}
			return fmt.Errorf("'$' may only start a substitution: %s", validList())
		case tok == dpcorev1.SubstitutionHost:
			return fmt.Errorf("%q must be a whole search entry (it is the node's whole search list), not part of %q", tok, entry)
		case tok == dpcorev1.SubstitutionNamespace || tok == dpcorev1.SubstitutionCluster:
			return fmt.Errorf("substitution %q must be a whole DNS label, not part of the label %q", tok, label)
		default:
			return fmt.Errorf("unknown substitution %q: %s", tok, validList())
		}
	}
}

// token returns the "$(…)" token at the start of s.
func token(s string) (string, bool) {
	if !strings.HasPrefix(s, "$(") {
		return "", false
	}
	end := strings.IndexByte(s, ')')
	if end < 0 {
		return "", false
	}
	return s[:end+1], true
}

// bareName returns the substitution name s starts with, for "$HOST"-style
// mistakes, or "".
func bareName(s string) string {
	for _, sub := range dpcorev1.Substitutions() {
		name := strings.TrimSuffix(strings.TrimPrefix(sub, "$("), ")")
		if strings.HasPrefix(s, name) {
			return name
		}
	}
	return ""
}

// Placeholder returns entry with every substitution label replaced by a valid
// placeholder label, so the result can be validated as a domain. It returns
// "" for $(HOST), whose value comes from the node. Only meaningful for entries
// that pass Check.
func Placeholder(entry string) string {
	if IsHost(entry) {
		return ""
	}
	labels := strings.Split(entry, ".")
	for i, l := range labels {
		if l == dpcorev1.SubstitutionNamespace || l == dpcorev1.SubstitutionCluster {
			labels[i] = placeholder
		}
	}
	return strings.Join(labels, ".")
}

// Expand returns the search list for entries with every substitution
// replaced. It fails on the first entry that does not pass Check, naming it.
func Expand(entries []string, v Values) ([]string, error) {
	out := make([]string, 0, len(entries)+len(v.HostSearch))
	for i, e := range entries {
		if err := Check(e, i, len(entries)); err != nil {
			return nil, fmt.Errorf("search[%d] %q: %w", i, e, err)
		}
		if IsHost(e) {
			out = append(out, v.HostSearch...)
			continue
		}
		labels := strings.Split(e, ".")
		for j, l := range labels {
			switch l {
			case dpcorev1.SubstitutionNamespace:
				labels[j] = v.Namespace
			case dpcorev1.SubstitutionCluster:
				labels[j] = v.ClusterDomain
			}
		}
		out = append(out, strings.Join(labels, "."))
	}
	return out, nil
}
