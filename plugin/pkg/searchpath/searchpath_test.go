package searchpath

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, qname, cd string
		want            Name
		ok              bool
	}{
		{"short name", "svc1.search.ns1.cluster.local.ap.k8s.io.", "cluster.local", Name{"svc1", "ns1", "cluster.local"}, true},
		{"cross namespace", "svc1.ns2.search.ns1.cluster.local.ap.k8s.io.", "cluster.local", Name{"svc1.ns2", "ns1", "cluster.local"}, true},
		{"base containing search", "search.search.ns1.cluster.local.ap.k8s.io.", "cluster.local", Name{"search", "ns1", "cluster.local"}, true},
		{"base ending in search labels", "a.search.b.search.ns1.cluster.local.ap.k8s.io.", "cluster.local", Name{"a.search.b", "ns1", "cluster.local"}, true},
		{"multi-label cluster domain", "svc1.search.ns1.corp.example.com.ap.k8s.io.", "corp.example.com", Name{"svc1", "ns1", "corp.example.com"}, true},
		{"cluster domain with trailing dot", "svc1.search.ns1.cluster.local.ap.k8s.io.", "cluster.local.", Name{"svc1", "ns1", "cluster.local"}, true},
		{"qname without trailing dot", "svc1.search.ns1.cluster.local.ap.k8s.io", "cluster.local", Name{"svc1", "ns1", "cluster.local"}, true},
		{"case-insensitive, base keeps case", "Svc1.SEARCH.NS1.Cluster.Local.AP.K8S.IO.", "cluster.local", Name{"Svc1", "ns1", "cluster.local"}, true},
		{"other cluster domain", "svc1.search.ns1.other.local.ap.k8s.io.", "cluster.local", Name{}, false},
		{"not in the zone", "svc1.default.svc.cluster.local.", "cluster.local", Name{}, false},
		{"no base", "search.ns1.cluster.local.ap.k8s.io.", "cluster.local", Name{}, false},
		{"no search label", "svc1.x.ns1.cluster.local.ap.k8s.io.", "cluster.local", Name{}, false},
		{"no namespace", "svc1.search.cluster.local.ap.k8s.io.", "cluster.local", Name{}, false},
		{"empty label in base", "a..b.search.ns1.cluster.local.ap.k8s.io.", "cluster.local", Name{}, false},
		{"empty cluster domain", "svc1.search.ns1.ap.k8s.io.", "", Name{}, false},
		{"zone alone", "ap.k8s.io.", "cluster.local", Name{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Parse(tt.qname, tt.cd)
			if ok != tt.ok || got != tt.want {
				t.Errorf("Parse(%q, %q) = %+v, %v; want %+v, %v", tt.qname, tt.cd, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestSearchNameParsesBack(t *testing.T) {
	s := SearchName("ns1", "cluster.local")
	if s != "search.ns1.cluster.local.ap.k8s.io" {
		t.Fatalf("SearchName = %q", s)
	}
	// What a resolver sends for "svc1" with that search path.
	if got, ok := Parse("svc1."+s+".", "cluster.local"); !ok || got.Base != "svc1" || got.Namespace != "ns1" {
		t.Errorf("Parse = %+v, %v", got, ok)
	}
}

func TestDerivedAndCandidates(t *testing.T) {
	d := Derived("ns1", "cluster.local.")
	if !reflect.DeepEqual(d, []string{"ns1.svc.cluster.local", "svc.cluster.local", "cluster.local"}) {
		t.Fatalf("Derived = %q", d)
	}
	got := Candidates("svc1", append(d, "corp.example."))
	want := []string{"svc1.ns1.svc.cluster.local.", "svc1.svc.cluster.local.", "svc1.cluster.local.", "svc1.corp.example.", "svc1."}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Candidates = %q, want %q", got, want)
	}
}

func TestEncodeDecode(t *testing.T) {
	many := make([]string, MaxEntries+1)
	for i := range many {
		many[i] = "a"
	}
	tests := []struct {
		name    string
		list    []string
		value   string
		wantErr string
	}{
		{"designed order", []string{"ns1.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.example"}, "ns1.svc.cluster.local,svc.cluster.local,cluster.local,corp.example", ""},
		{"trailing dots dropped", []string{"cluster.local."}, "cluster.local", ""},
		{"underscore labels", []string{"_sip._tcp.example.com"}, "_sip._tcp.example.com", ""},
		{"empty list", nil, "", ""},
		{"too many", many, "", "more than 32"},
		{"too long", []string{strings.Repeat("a.", 1100) + "a"}, "", "more than 2048"},
		{"empty entry", []string{"a", ""}, "", `entry 1 "": empty domain`},
		{"bad character", []string{"a b"}, "", `has the character ' '`},
		{"comma inside", []string{"a,b"}, "a,b", ""},
		{"leading dash", []string{"-a.com"}, "", "starts or ends with '-'"},
		{"long label", []string{strings.Repeat("x", 64) + ".com"}, "", "longer than 63"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Encode(tt.list)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Encode err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || string(v) != tt.value {
				t.Fatalf("Encode = %q, %v; want %q", v, err, tt.value)
			}
			back, err := Decode(v)
			if err != nil || strings.Join(back, ",") != tt.value {
				t.Errorf("Decode(%q) = %q, %v", v, back, err)
			}
		})
	}
}

func TestInZone(t *testing.T) {
	for _, tt := range []struct {
		zone, name string
		want       bool
	}{
		{"ap.k8s.io.", "svc1.search.ns1.cluster.local.ap.k8s.io.", true},
		{"ap.k8s.io.", "ap.k8s.io.", true},
		{"ap.k8s.io.", "SVC1.Search.NS1.Cluster.Local.AP.K8S.IO.", true},
		{"ap.k8s.io.", "xap.k8s.io.", false},
		{"ap.k8s.io.", "k8s.io.", false},
		{"cluster.local.", "svc.cluster.local.", true},
		{"cluster.local.", "example.com.", false},
		{".", "example.com.", true},
		{".", ".", true},
	} {
		if got := InZone(tt.zone, tt.name); got != tt.want {
			t.Errorf("InZone(%q, %q) = %v, want %v", tt.zone, tt.name, got, tt.want)
		}
	}
}
