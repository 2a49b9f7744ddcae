package negotiation

import (
	"fmt"
	"slices"
	"testing"
)

// summary renders ranges as "type/subtype@as,foo;q" for comparison.
func summary(rs []Range) []string {
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%s@%s%s;%g", r.MediaType(), r.Params["as"], r.Params["foo"], r.Q))
	}
	return out
}

func TestParseAccept(t *testing.T) {
	tests := []struct {
		name, header string
		want         []string
	}{
		{"empty accepts everything", "", []string{"*/*@;1"}},
		{"blank accepts everything", "  ", []string{"*/*@;1"}},
		{
			"by q then position; q=0, quoted commas and malformed ranges",
			`text/plain;q=0.1, application/json;as=Table;v=v1;g=meta.k8s.io, application/yaml;q=0, application/x;foo="a,b";q=0.5, bad/`,
			[]string{"application/json@Table;1", "application/x@a,b;0.5", "text/plain@;0.1"},
		},
		{"equal q keeps the header's order", "b/b;q=0.5, a/a;q=0.5, c/c", []string{"c/c@;1", "b/b@;0.5", "a/a@;0.5"}},
		{"type and parameter names are lower-cased", "Application/JSON; AS=Table; Q=0.5", []string{"application/json@Table;0.5"}},
		{"bad q is q=0", "a/a;q=x, b/b;q=2, c/c;q=-1, d/d", []string{"d/d@;1"}},
		{"malformed parameters drop the range", "a/a;foo, b/b;q=1;q=0.5, c/c", []string{"c/c@;1"}},
		{"no subtype", "application, application/, /json", nil},
		{"only commas", ",,", nil},
		{
			"an @ in the type, as kubectl's /openapi/v2 protobuf",
			"application/com.github.proto-openapi.spec.v2@v1.0+protobuf;q=0.9",
			[]string{"application/com.github.proto-openapi.spec.v2@v1.0+protobuf@;0.9"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := summary(ParseAccept(tc.header)); !slices.Equal(got, tc.want) {
				t.Errorf("ParseAccept(%q) = %v, want %v", tc.header, got, tc.want)
			}
		})
	}
}

func TestRangeMatches(t *testing.T) {
	tests := []struct {
		rng                string
		json, plain, table bool
	}{
		{"application/json", true, true, false},
		{"application/json;charset=utf-8", true, true, false},
		{"*/*", true, true, false},
		{"application/*", true, true, false},
		{"*/json", true, true, false},
		{"application/yaml", false, false, false},
		{"application/json;as=Table;v=v1;g=meta.k8s.io", true, false, true},
		{"application/json;as=Table;g=meta.k8s.io", true, false, true},
		{"*/*;as=Table;v=v1;g=meta.k8s.io", true, false, false},
		{"application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io", false, false, false},
		{"application/json;as=Table;v=v1;g=example.com", true, false, false},
	}
	for _, tc := range tests {
		rs := ParseAccept(tc.rng)
		if len(rs) != 1 {
			t.Fatalf("%q: %d ranges", tc.rng, len(rs))
		}
		r := rs[0]
		if r.AcceptsJSON() != tc.json || r.PlainJSON() != tc.plain || r.JSONAs("meta.k8s.io", "Table") != tc.table {
			t.Errorf("%q: AcceptsJSON %v, PlainJSON %v, JSONAs Table %v; want %v, %v, %v",
				tc.rng, r.AcceptsJSON(), r.PlainJSON(), r.JSONAs("meta.k8s.io", "Table"), tc.json, tc.plain, tc.table)
		}
	}
}

func TestAcceptsJSON(t *testing.T) {
	for header, want := range map[string]bool{
		"":                               true,
		"*/*":                            true,
		"application/json":               true,
		"text/html, application/*;q=0.1": true,
		"application/json;q=0":           false,
		"application/com.github.proto-openapi.spec.v3@v1.0+protobuf": false,
		"text/html": false,
	} {
		if got := AcceptsJSON(header); got != want {
			t.Errorf("AcceptsJSON(%q) = %v, want %v", header, got, want)
		}
	}
}

func TestPreferredKind(t *testing.T) {
	// want accepts v1 Tables only.
	want := func(r Range) bool { return r.JSONAs("meta.k8s.io", "Table") && r.Params["v"] == "v1" }
	tests := []struct {
		name, header string
		ok           bool
	}{
		{"asked for", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json", true},
		{"plain JSON first", "application/json,application/json;as=Table;v=v1;g=meta.k8s.io", false},
		{"plain JSON preferred by q", "application/json;as=Table;v=v1;g=meta.k8s.io;q=0.5,application/json", false},
		{"rejected version skipped", "application/json;as=Table;v=v2;g=meta.k8s.io,application/json;as=Table;v=v1;g=meta.k8s.io", true},
		{"rejected version, then plain JSON", "application/json;as=Table;v=v2;g=meta.k8s.io,application/json", false},
		{"other type skipped", "application/yaml,application/json;as=Table;v=v1;g=meta.k8s.io", true},
		{"wildcard is plain JSON", "*/*,application/json;as=Table;v=v1;g=meta.k8s.io", false},
		{"no Accept", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, ok := PreferredKind(tc.header, want)
			if ok != tc.ok || (ok && r.Params["v"] != "v1") {
				t.Errorf("PreferredKind(%q) = %+v, %v; want ok %v", tc.header, r, ok, tc.ok)
			}
		})
	}
}

// TestFirst: the most preferred range the caller takes wins, whatever its
// media type; unlike PreferredKind, plain JSON does not end the search.
func TestFirst(t *testing.T) {
	t.Parallel()
	protobuf := func(r Range) bool { return r.MediaType() == "application/vnd.kubernetes.protobuf" }
	tests := []struct {
		name, header string
		take         func(Range) bool
		want         string
		ok           bool
	}{
		{"first taken", "application/vnd.kubernetes.protobuf,application/json", Range.AcceptsJSON, "application/json", true},
		{"by q", "application/json;q=0.5,application/vnd.kubernetes.protobuf", protobuf, "application/vnd.kubernetes.protobuf", true},
		{"past plain JSON", "application/json,application/vnd.kubernetes.protobuf", protobuf, "application/vnd.kubernetes.protobuf", true},
		{"none taken", "text/plain", Range.AcceptsJSON, "", false},
		{"q=0 is never taken", "application/vnd.kubernetes.protobuf;q=0", protobuf, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, ok := First(tc.header, tc.take)
			got := ""
			if ok {
				got = r.MediaType()
			}
			if got != tc.want || ok != tc.ok {
				t.Errorf("First(%q) = %q, %v; want %q, %v", tc.header, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestContentType(t *testing.T) {
	for header, want := range map[string]string{
		"":                                "",
		"application/json":                "application/json",
		"Application/JSON; charset=utf-8": "application/json",
		"application/apply-patch+yaml":    "application/apply-patch+yaml",
		// Unparsable values stay whole and so match no media type.
		"application/json;foo": "application/json;foo",
		" Application/X@Y ":    "application/x@y",
	} {
		if got := ContentType(header); got != want {
			t.Errorf("ContentType(%q) = %q, want %q", header, got, want)
		}
	}
}

// FuzzParseAccept: any header parses without panicking into ranges with a
// type and subtype and a q in (0, 1], most preferred first.
func FuzzParseAccept(f *testing.F) {
	for _, s := range []string{
		"", "*/*", `application/json;as=Table;v=v1;g=meta.k8s.io;q=0.5, text/plain;x="a,b\"c"`,
		"application/com.github.proto-openapi.spec.v2@v1.0+protobuf", ",;=/", `a/b;q="1"`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		rs := ParseAccept(header)
		for i, r := range rs {
			if r.Type == "" || r.Subtype == "" || r.Q <= 0 || r.Q > 1 || r.Params == nil {
				t.Fatalf("ParseAccept(%q)[%d] = %+v", header, i, r)
			}
			if i > 0 && rs[i-1].Q < r.Q {
				t.Fatalf("ParseAccept(%q): %v before %v", header, rs[i-1].Q, r.Q)
			}
		}
		_ = ContentType(header)
	})
}
