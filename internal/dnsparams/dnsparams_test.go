package dnsparams

import (
	"reflect"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		name    string
		entries []string
		wantErr []string // per entry; "" = valid
	}{
		{"docs example", []string{"$(NAMESPACE).svc.$(CLUSTER)", "my.dns.search.suffix", "$(HOST)"}, []string{"", "", ""}},
		{"host only", []string{"$(HOST)"}, []string{""}},
		{"trailing dot", []string{"$(NAMESPACE).$(CLUSTER)."}, []string{""}},
		{"part of a label", []string{"abc$(NAMESPACE)1234.example.com"},
			[]string{`substitution "$(NAMESPACE)" must be a whole DNS label, not part of the label "abc$(NAMESPACE)1234"`}},
		{"cluster part of a label", []string{"x$(CLUSTER)"},
			[]string{`substitution "$(CLUSTER)" must be a whole DNS label, not part of the label "x$(CLUSTER)"`}},
		{"unknown token", []string{"$(POD).svc"},
			[]string{`unknown substitution "$(POD)": valid substitutions are "$(NAMESPACE)", "$(CLUSTER)", "$(HOST)"`}},
		{"lower case token", []string{"$(namespace).svc"},
			[]string{`unknown substitution "$(namespace)": valid substitutions are "$(NAMESPACE)", "$(CLUSTER)", "$(HOST)"`}},
		{"bare $HOST", []string{"$HOST"}, []string{`"$HOST" is not a substitution: write "$(HOST)"`}},
		{"bare $NAMESPACE", []string{"$NAMESPACE.svc"}, []string{`"$NAMESPACE" is not a substitution: write "$(NAMESPACE)"`}},
		{"lone dollar", []string{"a.$.b"}, []string{`'$' may only start a substitution: valid substitutions are "$(NAMESPACE)", "$(CLUSTER)", "$(HOST)"`}},
		{"unterminated", []string{"$(HOST"}, []string{`'$' may only start a substitution: valid substitutions are "$(NAMESPACE)", "$(CLUSTER)", "$(HOST)"`}},
		{"host not last", []string{"$(HOST)", "a.com"}, []string{`"$(HOST)" must be the last search entry`, ""}},
		{"host inside entry", []string{"foo.$(HOST)"},
			[]string{`"$(HOST)" must be a whole search entry (it is the node's whole search list), not part of "foo.$(HOST)"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, e := range tt.entries {
				err := Check(e, i, len(tt.entries))
				got := ""
				if err != nil {
					got = err.Error()
				}
				if got != tt.wantErr[i] {
					t.Errorf("Check(%q) = %q, want %q", e, got, tt.wantErr[i])
				}
			}
		})
	}
}

func TestPlaceholder(t *testing.T) {
	for in, want := range map[string]string{
		"$(NAMESPACE).svc.$(CLUSTER)": "x.svc.x",
		"$(HOST)":                     "",
		"plain.example.com":           "plain.example.com",
		"$(CLUSTER).":                 "x.",
	} {
		if got := Placeholder(in); got != want {
			t.Errorf("Placeholder(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExpand(t *testing.T) {
	v := Values{Namespace: "ns1", ClusterDomain: "cluster.local", HostSearch: []string{"foo.com", "bar.com"}}
	tests := []struct {
		name    string
		entries []string
		want    []string
		wantErr string
	}{
		{"docs example", []string{"$(NAMESPACE).svc.$(CLUSTER)", "my.dns.search.suffix", "$(HOST)"},
			[]string{"ns1.svc.cluster.local", "my.dns.search.suffix", "foo.com", "bar.com"}, ""},
		{"host only", []string{"$(HOST)"}, []string{"foo.com", "bar.com"}, ""},
		{"custom then host", []string{"my.custom.suffix", "$(HOST)"}, []string{"my.custom.suffix", "foo.com", "bar.com"}, ""},
		{"no host", []string{"$(CLUSTER)"}, []string{"cluster.local"}, ""},
		{"empty", nil, []string{}, ""},
		{"invalid", []string{"abc$(NAMESPACE)1234"}, nil, `search[0] "abc$(NAMESPACE)1234": substitution`},
		{"host not last", []string{"$(HOST)", "x"}, nil, `search[0] "$(HOST)": "$(HOST)" must be the last search entry`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Expand(tt.entries, v)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want prefix %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// FuzzExpand checks that Check and Expand agree, that nothing is left
// unexpanded, and that nothing panics.
func FuzzExpand(f *testing.F) {
	f.Add("$(NAMESPACE).svc.$(CLUSTER)", "$(HOST)", "ns1", "cluster.local")
	f.Add("abc$(NAMESPACE)1234", "$HOST", "", "")
	f.Add("$(", "$()", "a", "b")
	f.Fuzz(func(t *testing.T, e1, e2, ns, cd string) {
		entries := []string{e1, e2}
		v := Values{Namespace: ns, ClusterDomain: cd, HostSearch: []string{"h.example"}}
		got, err := Expand(entries, v)
		checked := Check(e1, 0, 2) == nil && Check(e2, 1, 2) == nil
		if (err == nil) != checked {
			t.Fatalf("Expand err=%v but Check ok=%v for %q", err, checked, entries)
		}
		if err != nil {
			return
		}
		if strings.Contains(ns+cd, "$") {
			return
		}
		for _, s := range got {
			if strings.Contains(s, "$(") {
				t.Fatalf("unexpanded substitution in %q from %q", s, entries)
			}
		}
	})
}
