package validation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

// upstreamRatchet is upstream's approximation of KEP-4427 rule (b), kept
// here only to show where the KEP rule that dnsplane implements differs.
func upstreamRatchet(old *dpcorev1.PodSpec) bool {
	if old == nil || old.DNSConfig == nil {
		return false
	}
	for _, s := range old.DNSConfig.Searches {
		if s == "." || strings.Contains(s, "_") {
			return true
		}
	}
	return false
}

// TestKEP4427Ratchet: with the gate off, an update is validated with the
// relaxed rules iff any search string of the old object fails strict
// validation (KEP-4427 Proposal (b)).
func TestKEP4427Ratchet(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 254)
	tests := []struct {
		name     string
		old      *dpcorev1.PodSpec
		relaxed  bool
		upstream bool // what upstream's approximation decides
	}{
		{name: "create", old: nil},
		{name: "old without dnsConfig", old: withConfig(corev1.DNSClusterFirst, nil)},
		{name: "old without searches", old: withConfig(corev1.DNSClusterFirst, &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}})},
		{name: "old plain", old: withConfig(corev1.DNSClusterFirst, searches("example.com"))},
		{name: "old trailing dot passes strict", old: withConfig(corev1.DNSClusterFirst, searches("foo."))},
		{name: "old underscore (agree)", old: withConfig(corev1.DNSClusterFirst, searches("_x.com")), relaxed: true, upstream: true},
		{name: "old single dot (agree)", old: withConfig(corev1.DNSClusterFirst, searches(".")), relaxed: true, upstream: true},
		{name: "old underscore invalid even relaxed (agree)", old: withConfig(corev1.DNSClusterFirst, searches("_")), relaxed: true, upstream: true},
		{name: "old upper case (differ)", old: withConfig(corev1.DNSClusterFirst, searches("Foo.example.com")), relaxed: true},
		{name: "old empty label (differ)", old: withConfig(corev1.DNSClusterFirst, searches("a..b")), relaxed: true},
		{name: "old over-long (differ)", old: withConfig(corev1.DNSClusterFirst, searches(long)), relaxed: true},
		{name: "old double dot (differ)", old: withConfig(corev1.DNSClusterFirst, searches("..")), relaxed: true},
		{name: "any one entry is enough", old: withConfig(corev1.DNSClusterFirst, searches("ok.com", "Foo.com", "fine")), relaxed: true},
		{name: "old dnsParams relaxed entry (differ)", old: withCustom(dpcorev1.DNSCustom, []string{"_x.$(CLUSTER)"}), relaxed: true},
		{name: "old dnsParams upper case (differ)", old: withCustom(dpcorev1.DNSCustom, []string{"Foo.$(CLUSTER)", "$(HOST)"}), relaxed: true},
		{name: "old dnsParams substitutions only", old: withCustom(dpcorev1.DNSCustom, []string{"$(NAMESPACE).svc.$(CLUSTER)", "$(HOST)"})},
		{name: "old dnsParams $(HOST) is no search string", old: withCustom(dpcorev1.DNSCustom, []string{"$(HOST)"})},
		{name: "old dnsParams without custom", old: func() *dpcorev1.PodSpec {
			s := withConfig(dpcorev1.DNSCustom, nil)
			s.DNSParams = &dpcorev1.PodDNSParams{}
			return s
		}()},
	}
	newSpec := func() *dpcorev1.PodSpec {
		return withConfig(corev1.DNSClusterFirst, searches("_sip._tcp.example.com", "."))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := relaxedSearch(tt.old, false); got != tt.relaxed {
				t.Errorf("relaxedSearch(gate off) = %v, want %v", got, tt.relaxed)
			}
			if !relaxedSearch(tt.old, true) {
				t.Error("relaxedSearch(gate on) = false, want true")
			}
			if got := upstreamRatchet(tt.old); got != tt.upstream {
				t.Errorf("upstream approximation = %v, test table says %v", got, tt.upstream)
			}
			got := ValidatePodSpecDNS(newSpec(), tt.old, specPath(), strictOpts)
			if tt.relaxed {
				expectErrs(t, got)
				return
			}
			expectErrs(t, got,
				`spec.dnsConfig.searches[0]: Invalid value: "_sip._tcp.example.com": `+strictMsg,
				`spec.dnsConfig.searches[1]: Invalid value: "": `+strictMsg)
		})
	}
}

// TestRatchetCoversDNSParams: one legacy value anywhere in the old object
// relaxes both search lists of the update.
func TestRatchetCoversDNSParams(t *testing.T) {
	t.Parallel()
	old := withConfig(dpcorev1.DNSCustom, searches("Legacy.example"))
	old.DNSParams = &dpcorev1.PodDNSParams{Custom: &dpcorev1.PodDNSParamsCustom{Search: []string{"$(HOST)"}}}
	upd := withCustom(dpcorev1.DNSCustom, []string{"_x.$(CLUSTER)", "$(HOST)"})
	expectErrs(t, ValidatePodSpecDNS(upd, old, specPath(), strictOpts))
	expectErrs(t, ValidatePodSpecDNS(upd, nil, specPath(), strictOpts),
		`spec.dnsParams.custom.search[0]: Invalid value: "_x.$(CLUSTER)": `+strictMsg)
}

func TestCheckSearch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in              string
		report          string // the trimmed value an error shows
		strict, relaxed bool   // valid?
	}{
		{"example.com", "example.com", true, true},
		{"example.com.", "example.com", true, true},
		{".", "", false, true},
		{"..", ".", false, false},
		{"_a.b", "_a.b", false, true},
		{"a.b..", "a.b.", false, false},
		{"", "", false, false},
	}
	for _, tt := range tests {
		for _, relaxed := range []bool{false, true} {
			got, msgs := checkSearch(tt.in, relaxed)
			want := tt.strict
			if relaxed {
				want = tt.relaxed
			}
			if (len(msgs) == 0) != want {
				t.Errorf("checkSearch(%q, relaxed=%v) valid = %v, want %v (%v)", tt.in, relaxed, len(msgs) == 0, want, msgs)
			}
			if len(msgs) > 0 && got != tt.report {
				t.Errorf("checkSearch(%q, relaxed=%v) reports %q, want %q", tt.in, relaxed, got, tt.report)
			}
		}
	}
}

// FuzzSearchStrictImpliesRelaxed: relaxed mode only ever adds values, at the
// level of one entry and through the whole pod spec check (dnsConfig and
// dnsParams), so turning the gate on can never break a stored object.
func FuzzSearchStrictImpliesRelaxed(f *testing.F) {
	for _, s := range []string{"example.com", "foo.", ".", "..", "_a", "a_", "a..b", "Foo", "", "$(CLUSTER)", "$(HOST)", "a.$(NAMESPACE)."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, strictMsgs := checkSearch(s, false)
		_, relaxedMsgs := checkSearch(s, true)
		if len(strictMsgs) == 0 && len(relaxedMsgs) != 0 {
			t.Fatalf("%q: strict accepts, relaxed rejects: %v", s, relaxedMsgs)
		}
		if failsStrict(s) != (len(strictMsgs) > 0) {
			t.Fatalf("%q: failsStrict disagrees with checkSearch", s)
		}
		specs := []func() *dpcorev1.PodSpec{
			func() *dpcorev1.PodSpec { return withConfig(corev1.DNSClusterFirst, searches(s)) },
			func() *dpcorev1.PodSpec { return withCustom(dpcorev1.DNSCustom, []string{s}) },
		}
		for _, spec := range specs {
			strictErrs := ValidatePodSpecDNS(spec(), nil, specPath(), strictOpts)
			relaxedErrs := ValidatePodSpecDNS(spec(), nil, specPath(), allOn)
			if len(strictErrs) == 0 && len(relaxedErrs) != 0 {
				t.Fatalf("%q: strict spec valid, relaxed spec invalid: %v", s, relaxedErrs)
			}
			if len(relaxedErrs) > len(strictErrs) {
				t.Fatalf("%q: relaxed reports more errors (%v) than strict (%v)", s, relaxedErrs, strictErrs)
			}
		}
	})
}
