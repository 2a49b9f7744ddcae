package resolvconf

import (
	"slices"
	"strings"
)

// Config is a resolver configuration: what the container runtime writes as
// /etc/resolv.conf.
type Config struct {
	Nameservers []string
	Searches    []string
	Options     []string // "name" or "name:value", deterministic order
}

// clone lets callers keep the node's host Config while a pod's copy is merged
// and truncated in place.
func (c Config) clone() Config {
	return Config{
		Nameservers: slices.Clone(c.Nameservers),
		Searches:    slices.Clone(c.Searches),
		Options:     slices.Clone(c.Options),
	}
}

// optionName is the key resolvers and kubelet use to decide that two options
// are the same option with different values.
func optionName(opt string) string {
	name, _, _ := strings.Cut(opt, ":")
	return name
}

// optionSet merges options by name, keeping the position where a name first
// appeared and the text of its last occurrence: a resolver applies the last
// value, and a stable position keeps the rendered file stable.
type optionSet struct {
	names  []string
	byName map[string]string
}

func (s *optionSet) set(name, opt string) {
	if s.byName == nil {
		s.byName = make(map[string]string)
	}
	if _, ok := s.byName[name]; !ok {
		s.names = append(s.names, name)
	}
	s.byName[name] = opt
}

func (s *optionSet) list() []string {
	if len(s.names) == 0 {
		return nil
	}
	out := make([]string, len(s.names))
	for i, n := range s.names {
		out[i] = s.byName[n]
	}
	return out
}
