package resolvconf

import "slices"

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
