package searchpath

import (
	"reflect"
	"strings"
	"testing"
)

// inZoneSink receives results computed only to be measured.
var inZoneSink bool

func TestDedupe(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"nil", nil, []string{}},
		{"no duplicates", []string{"a.example", "b.example"}, []string{"a.example", "b.example"}},
		{"first kept, order kept", []string{"b.example", "a.example", "b.example", "c.example", "a.example"}, []string{"b.example", "a.example", "c.example"}},
		{"case ignored, first spelling kept", []string{"Corp.Example", "corp.example", "CORP.EXAMPLE"}, []string{"Corp.Example"}},
		{"trailing dot ignored", []string{"corp.example.", "corp.example"}, []string{"corp.example."}},
		{"suffix is not a duplicate", []string{"example", "corp.example", "xcorp.example"}, []string{"example", "corp.example", "xcorp.example"}},
		{"32 identical", strings.Split(strings.Repeat("corp.example,", 31)+"corp.example", ","), []string{"corp.example"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Dedupe(tt.in)
			if len(got) == 0 && len(tt.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Dedupe(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestDedupeAllocs: Dedupe runs for every expanded query; it works in
// place.
func TestDedupeAllocs(t *testing.T) {
	list := []string{"ns1.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.example", "Corp.Example."}
	buf := make([]string, len(list))
	if n := testing.AllocsPerRun(100, func() {
		copy(buf, list)
		if len(Dedupe(buf)) != 4 {
			t.Fatal("duplicate kept")
		}
	}); n != 0 {
		t.Errorf("Dedupe allocates %v times per call", n)
	}
}

func TestCandidateInZone(t *testing.T) {
	tests := []struct {
		zone, base, entry string
		want              bool
	}{
		{"cluster.local", "svc1", "ns1.svc.cluster.local", true},
		{"cluster.local", "svc1", "cluster.local", true},
		{"cluster.local", "svc1", "Cluster.Local.", true},
		{"cluster.local", "svc1", "corp.example", false},
		{"cluster.local", "svc1", "xcluster.local", false},
		{"cluster.local", "svc1", "local", false},
		// The entry alone is not in the zone, the name is.
		{"cluster.local", "svc1.ns1.svc.cluster", "local", true},
		{"cluster.local", "svc1.ns1.svc.xcluster", "local", false},
		{"cluster.local", "cluster", "local", true},
		{"cluster.local", "svc1.ns1.svc", "cluster.local.example", false},
		{"my.cluster.local", "svc1.my", "cluster.local", true},
		{"my.cluster.local", "svc1.my", "corp.local", false},
	}
	for _, tt := range tests {
		if got := CandidateInZone(tt.zone, tt.base, tt.entry); got != tt.want {
			t.Errorf("CandidateInZone(%q, %q, %q) = %v, want %v", tt.zone, tt.base, tt.entry, got, tt.want)
		}
	}
	// The result goes to a package variable so the call cannot be optimised
	// away, which would make the allocation count meaningless.
	if n := testing.AllocsPerRun(100, func() { inZoneSink = CandidateInZone("cluster.local", "svc1.ns1.svc.cluster", "local") }); n != 0 {
		t.Errorf("CandidateInZone allocates %v times per call", n)
	}
}

// FuzzCandidateInZone: CandidateInZone agrees with InZone on the joined
// candidate for names with non-empty labels (what Parse and Decode let
// through).
func FuzzCandidateInZone(f *testing.F) {
	f.Add("cluster.local", "svc1.ns1.svc.cluster", "local")
	f.Add("cluster.local", "svc1", "corp.example")
	f.Add("a.b.c", "x.a", "b.c")
	f.Fuzz(func(t *testing.T, zone, base, entry string) {
		for _, s := range []string{zone, base, entry} {
			if s == "" || strings.HasPrefix(s, ".") || strings.HasSuffix(s, ".") || strings.Contains(s, "..") || strings.Contains(s, `\`) {
				return
			}
		}
		want := InZone(zone, base+"."+entry)
		if got := CandidateInZone(zone, base, entry); got != want {
			t.Fatalf("CandidateInZone(%q, %q, %q) = %v, InZone on the joined name %v", zone, base, entry, got, want)
		}
	})
}
