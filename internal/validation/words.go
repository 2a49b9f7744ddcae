package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/resolvconf"
)

// keptWords are the option names and values of the stored spec on an
// update: one already stored stays valid, so that a pod (or a Deployment
// whose template holds it) stored before the one-word rule can still be
// updated, labelled or have its finalizers removed (docs/pod-dns.md,
// "Ratcheting").
type keptWords map[string]bool

func keptWordsOf(old *dpcorev1.PodSpec) keptWords {
	if old == nil {
		return nil
	}
	k := keptWords{}
	if dc := old.DNSConfig; dc != nil {
		for _, o := range dc.Options {
			k[o.Name] = true
			if o.Value != nil {
				k[*o.Value] = true
			}
		}
	}
	if p := old.DNSParams; p != nil && p.Custom != nil {
		for _, o := range p.Custom.Options {
			k[o] = true
		}
	}
	return k
}

// validateWord refuses w, a value the node agent writes into the pod's
// resolv.conf as it is, unless it stays one word there
// (resolvconf.IsOneWord) or the stored object already held it.
func validateWord(w string, fldPath *field.Path, kept keptWords) field.ErrorList {
	if resolvconf.IsOneWord(w) || kept[w] {
		return nil
	}
	return field.ErrorList{field.Invalid(fldPath, w, resolvconf.MsgNotOneWord)}
}
