package apiserver

import (
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// maxStrategicMergeWork is dnsplane's bound on the list-merge steps of
// one strategic merge patch (kube has none and spends the time).
// strategicpatch finds every element by a linear scan and
// deduplicates and orders merged lists pairwise, so a list of n
// elements merged into one of m costs about (n+m)² steps, ~120 ns
// each: a 320 KB patch of 10,000 env entries took 15 s. 10⁷ steps are
// about a second, lists of ~3,000 elements.
const maxStrategicMergeWork = 10_000_000

// smpPricer walks a strategic merge patch with the object it applies to
// and the Go type's patch metadata, the way strategicpatch will, to price
// its list merges before running them (see maxStrategicMergeWork). It
// also refuses what makes strategicpatch panic: a merge key, $retainKeys
// or $deleteFromPrimitiveList entry that is a map or a list, which it
// compares with == or uses as a map key.
type smpPricer struct {
	work     int
	worst    int    // the most expensive list's price
	worstAt  string // and its path
	worstLen [2]int // its patch and live lengths
}

const (
	smpSetElementOrder         = "$setElementOrder/"
	smpDeleteFromPrimitiveList = "$deleteFromPrimitiveList/"
	smpRetainKeys              = "$retainKeys"
)

// priceStrategicMerge returns the error for a patch that strategicpatch
// must not run: over the work limit (413) or malformed in a way that
// would panic (400).
func priceStrategicMerge(patch, original map[string]any, meta strategicpatch.LookupPatchMeta) error {
	var p smpPricer
	if err := p.walkMap(patch, original, meta, ""); err != nil {
		return err
	}
	if p.work > maxStrategicMergeWork {
		return apierrors.NewRequestEntityTooLargeError(fmt.Sprintf(
			"the strategic merge patch needs about %d list-merge steps, more than the limit of %d (the largest: %d patch elements merged with %d at %s); send long lists with a JSON merge patch, a JSON patch or server-side apply",
			p.work, maxStrategicMergeWork, p.worstLen[0], p.worstLen[1], p.worstAt))
	}
	return nil
}

func (p *smpPricer) walkMap(patch, original map[string]any, meta strategicpatch.LookupPatchMeta, path string) error {
	for k, v := range patch {
		switch {
		case k == smpRetainKeys || strings.HasPrefix(k, smpDeleteFromPrimitiveList):
			list, _ := v.([]any)
			for _, e := range list {
				if !scalar(e) {
					if k == smpRetainKeys {
						return apierrors.NewBadRequest(mergepatch.ErrBadPatchFormatForRetainKeys.Error())
					}
					return apierrors.NewBadRequest(fmt.Sprintf("%s.%s: the entries of a delete list must be scalars", path, k))
				}
			}
		case strings.HasPrefix(k, smpSetElementOrder):
			// Priced with its list below; its entries are looked up by
			// merge key.
			name := strings.TrimPrefix(k, smpSetElementOrder)
			if _, ok := patch[name]; !ok {
				if err := p.walkList(name, nil, v, original[name], meta, path); err != nil {
					return err
				}
			}
		case strings.HasPrefix(k, "$"):
			// $patch and unknown directives: strategicpatch decides.
		default:
			switch pv := v.(type) {
			case map[string]any:
				ov, ok := original[k].(map[string]any)
				if !ok {
					// Taken as it is.
					continue
				}
				sub, pm, err := meta.LookupPatchMetadataForStruct(k)
				if err != nil || hasStrategy(pm, "replace") {
					continue
				}
				if err := p.walkMap(pv, ov, sub, path+"."+k); err != nil {
					return err
				}
			case []any:
				if err := p.walkList(k, pv, patch[smpSetElementOrder+k], original[k], meta, path); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// walkList prices the merge of the patch list pv (with its
// $setElementOrder list order) into the live list at key k.
func (p *smpPricer) walkList(k string, pv []any, order, live any, meta strategicpatch.LookupPatchMeta, path string) error {
	sub, pm, err := meta.LookupPatchMetadataForSlice(k)
	if err != nil || !hasStrategy(pm, "merge") {
		// An error is strategicpatch's to report; other lists are replaced.
		return nil
	}
	at := path + "." + k
	key := pm.GetPatchMergeKey()
	ol, _ := order.([]any)
	for _, list := range [][]any{pv, ol} {
		for _, e := range list {
			if em, ok := e.(map[string]any); ok && key != "" {
				if mv, ok := em[key]; ok && !scalar(mv) {
					return apierrors.NewBadRequest(fmt.Sprintf("%s: the merge key %q of a list element must be a scalar, not %T", at, key, mv))
				}
			}
		}
	}
	lv, _ := live.([]any)
	if len(lv) == 0 && len(ol) == 0 {
		// Nothing to merge with: strategicpatch takes the list as it is.
		return nil
	}
	n := len(lv) + len(pv) + len(ol)
	price := n * n
	p.work += price
	if price > p.worst {
		p.worst, p.worstAt, p.worstLen = price, at, [2]int{len(pv), len(lv)}
	}
	if key == "" {
		return nil
	}
	// Nested merge lists merge with the live element of the same key.
	byKey := make(map[any]map[string]any, len(lv))
	for _, e := range lv {
		if em, ok := e.(map[string]any); ok && scalar(em[key]) {
			byKey[em[key]] = em
		}
	}
	for _, e := range pv {
		em, ok := e.(map[string]any)
		if !ok {
			continue
		}
		if le, ok := byKey[em[key]]; ok {
			if err := p.walkMap(em, le, sub, fmt.Sprintf("%s[%s=%v]", at, key, em[key])); err != nil {
				return err
			}
		}
	}
	return nil
}

// scalar reports whether a decoded JSON value can be compared with == and
// used as a map key.
func scalar(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return false
	}
	return true
}

func hasStrategy(pm strategicpatch.PatchMeta, s string) bool {
	for _, v := range pm.GetPatchStrategies() {
		if v == s {
			return true
		}
	}
	return false
}
