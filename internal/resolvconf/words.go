package resolvconf

import (
	"fmt"
	"strings"
	"unicode"
)

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
			if i := strings.IndexFunc(w, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }); i >= 0 {
				return fmt.Errorf("%s %q contains whitespace or a control character: resolv.conf entries must be single words", l.what, w)
			}
		}
	}
	return nil
}
