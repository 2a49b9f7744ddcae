package resolvconf

import (
	"fmt"
	"strings"
	"unicode"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

// MsgNotOneWord is why a pod's resolv.conf entry is refused: by the API
// server and `dnsplane validate` (internal/validation) for the fields that
// go into the file as they are, and by the node agent (ForPod) for a pod
// stored before that rule.
const MsgNotOneWord = "must be a single word, without whitespace or control characters: " +
	"it is written into the pod's resolv.conf, where whitespace splits it and a newline starts a line of its own"

// IsOneWord reports whether w stays one word in a rendered resolv.conf.
func IsOneWord(w string) bool {
	return w != "" && strings.IndexFunc(w, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) < 0
}

// checkWords refuses a config whose entries would not stay single words in
// the rendered file. The API validates search strings, but upstream leaves
// option names and values free-form, so an option like "ndots:1\nnameserver
// 6.6.6.6" would otherwise inject lines into the pod's resolv.conf.
func checkWords(c Config) error {
	for _, l := range []struct {
		what  string
		words []string
	}{{"nameserver", c.Nameservers}, {"search", c.Searches}, {"option", c.Options}} {
		for _, w := range l.words {
			if w == "" {
				return fmt.Errorf("empty %s: resolv.conf entries must be single words", l.what)
			}
			if !IsOneWord(w) {
				return fmt.Errorf("%s %q contains whitespace or a control character: resolv.conf entries must be single words", l.what, w)
			}
		}
	}
	return nil
}

// checkSpecWords names the field of pod's spec that cannot be one word of
// its resolv.conf, for a pod stored before the API server refused it (or
// by another API server): the pod's spec cannot change, so the message
// says what is wrong and that only a new pod helps.
func checkSpecWords(spec *dpcorev1.PodSpec) error {
	var bad []string
	check := func(path, w string) {
		if w != "" && !IsOneWord(w) {
			bad = append(bad, fmt.Sprintf("%s: Invalid value: %q: %s", path, w, MsgNotOneWord))
		}
	}
	if dc := spec.DNSConfig; dc != nil {
		for i, s := range dc.Searches {
			check(fmt.Sprintf("spec.dnsConfig.searches[%d]", i), s)
		}
		for i, o := range dc.Options {
			check(fmt.Sprintf("spec.dnsConfig.options[%d].name", i), o.Name)
			if o.Value != nil {
				check(fmt.Sprintf("spec.dnsConfig.options[%d].value", i), *o.Value)
			}
		}
	}
	if p := spec.DNSParams; p != nil && p.Custom != nil {
		for i, s := range p.Custom.Search {
			check(fmt.Sprintf("spec.dnsParams.custom.search[%d]", i), s)
		}
		for i, o := range p.Custom.Options {
			check(fmt.Sprintf("spec.dnsParams.custom.options[%d]", i), o)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%s (the API server refuses this now; a pod's DNS fields cannot be updated: delete the pod and create it with valid values)",
		strings.Join(bad, "; "))
}
