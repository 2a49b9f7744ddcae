package hostresolv

import "strings"

// Config is what a resolv.conf says to a resolver; other keywords (domain,
// sortlist, lookup) are dropped, as kubelet drops them.
type Config struct {
	Nameservers []string
	Searches    []string
	Options     []string // "name" or "name:value", deterministic order
}

// OptionName is the key resolvers and kubelet use to decide that two options
// are the same option with different values.
func OptionName(opt string) string {
	name, _, _ := strings.Cut(opt, ":")
	return name
}

// OptionSet merges options by name, keeping the position where a name first
// appeared and the text of its last occurrence: a resolver applies the last
// value, and a stable position keeps a rendered file byte-stable. It is
// exported because a pod's spec.dnsConfig options merge over the host's by
// the same rule (internal/resolvconf). The zero value is empty and ready.
type OptionSet struct {
	names  []string
	byName map[string]string
}

// Set records opt under name, replacing the text of an earlier option with
// that name but keeping its position.
func (s *OptionSet) Set(name, opt string) {
	if s.byName == nil {
		s.byName = make(map[string]string)
	}
	if _, ok := s.byName[name]; !ok {
		s.names = append(s.names, name)
	}
	s.byName[name] = opt
}

// List returns the merged options in first-seen order, nil when empty.
func (s *OptionSet) List() []string {
	if len(s.names) == 0 {
		return nil
	}
	out := make([]string, len(s.names))
	for i, n := range s.names {
		out[i] = s.byName[n]
	}
	return out
}
