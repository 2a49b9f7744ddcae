// Package negotiation parses the media types of HTTP requests: the ranges of
// an Accept header, in the client's order of preference, and the media type
// of a Content-Type. It is the one parser every endpoint negotiates with, so
// a header means the same to the REST handlers (Tables), discovery and the
// OpenAPI documents.
//
// kube-apiserver renders one object in several forms and lets the client
// choose with media type parameters (k8s.io/apiserver,
// pkg/endpoints/handlers/negotiation): application/json;as=Table;v=v1;g=meta.k8s.io
// asks for a meta.k8s.io/v1 Table, and
// application/json;as=APIGroupDiscoveryList;v=v2;g=apidiscovery.k8s.io for
// aggregated discovery. PreferredKind makes that choice.
package negotiation

import (
	"mime"
	"slices"
	"strconv"
	"strings"
)

// Range is one acceptable media range of an Accept header.
type Range struct {
	// Type and Subtype are lower case; either may be "*".
	Type, Subtype string
	// Params are the range's parameters with lower-case keys, without q.
	Params map[string]string
	// Q is the quality, in (0, 1].
	Q float64
}

// MediaType is the range without parameters, "type/subtype".
func (r Range) MediaType() string { return r.Type + "/" + r.Subtype }

// AcceptsJSON reports whether the range admits application/json.
func (r Range) AcceptsJSON() bool {
	return (r.Type == "application" || r.Type == "*") && (r.Subtype == "json" || r.Subtype == "*")
}

// PlainJSON reports whether the range admits application/json without
// asking for a particular kind: no parameter but charset.
func (r Range) PlainJSON() bool {
	if !r.AcceptsJSON() {
		return false
	}
	for k := range r.Params {
		if k != "charset" {
			return false
		}
	}
	return true
}

// JSONAs reports whether the range is application/json asking for kind as
// of group g (the as= and g= parameters), in any version (v=).
func (r Range) JSONAs(g, as string) bool {
	return r.Type == "application" && r.Subtype == "json" && r.Params["g"] == g && r.Params["as"] == as
}

// ParseAccept parses an Accept header into its acceptable media ranges, most
// preferred first: by q, then in the header's order. Ranges with q=0 are
// dropped, and so are malformed ones (no type/subtype, parameters that do
// not parse). An empty header accepts everything (RFC 9110, section 12.5.1).
//
// The media type itself is only split and lower-cased, not checked against
// the token grammar: the protobuf type kubectl asks /openapi/v2 for,
// application/com.github.proto-openapi.spec.v2@v1.0+protobuf, contains an
// '@', which mime.ParseMediaType rejects.
func ParseAccept(header string) []Range {
	if strings.TrimSpace(header) == "" {
		return []Range{{Type: "*", Subtype: "*", Params: map[string]string{}, Q: 1}}
	}
	var out []Range
	for _, part := range splitAccept(header) {
		r, ok := parseRange(part)
		if ok && r.Q > 0 {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b Range) int {
		switch {
		case a.Q > b.Q:
			return -1
		case a.Q < b.Q:
			return 1
		}
		return 0
	})
	return out
}

// parseRange parses one media range; ok is false when it is malformed. A q
// that is not a number in [0, 1] is q=0.
func parseRange(s string) (Range, bool) {
	base, params, _ := strings.Cut(s, ";")
	typ, sub, ok := strings.Cut(strings.ToLower(strings.TrimSpace(base)), "/")
	if !ok || typ == "" || sub == "" {
		return Range{}, false
	}
	// The parameters are parsed behind a placeholder type, for the reason
	// ParseAccept gives.
	_, ps, err := mime.ParseMediaType("x/y;" + params)
	if err != nil {
		return Range{}, false
	}
	r := Range{Type: typ, Subtype: sub, Params: map[string]string{}, Q: 1}
	for k, v := range ps {
		if k != "q" {
			r.Params[k] = v
			continue
		}
		q, err := strconv.ParseFloat(v, 64)
		if err != nil || q < 0 || q > 1 {
			q = 0
		}
		r.Q = q
	}
	return r, true
}

// splitAccept splits a header on the commas outside quoted strings.
func splitAccept(s string) []string {
	var parts []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if quoted {
				i++
			}
		case '"':
			quoted = !quoted
		case ',':
			if !quoted {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

// AcceptsJSON reports whether an Accept header admits application/json.
func AcceptsJSON(header string) bool {
	return slices.ContainsFunc(ParseAccept(header), Range.AcceptsJSON)
}

// PreferredKind negotiates between plain JSON and a JSON rendering of
// another kind: it returns the most preferred range that want accepts and
// true, or false when a range admitting plain JSON is preferred to it or
// none matches. Ranges want rejects are skipped, so a client may list a
// version the server does not serve before one it does.
func PreferredKind(header string, want func(Range) bool) (Range, bool) {
	for _, r := range ParseAccept(header) {
		if want(r) {
			return r, true
		}
		if r.PlainJSON() {
			return Range{}, false
		}
	}
	return Range{}, false
}

// First returns the most preferred range of an Accept header that accept
// takes, and false when it takes none. It is kube-apiserver's walk over the
// Accept header (k8s.io/apiserver, pkg/endpoints/handlers/negotiation,
// NegotiateMediaTypeOptions): the first range the server can answer wins,
// whatever media type it names, so application/vnd.kubernetes.protobuf
// before application/json means protobuf where it is served and JSON
// elsewhere.
func First(header string, accept func(Range) bool) (Range, bool) {
	for _, r := range ParseAccept(header) {
		if accept(r) {
			return r, true
		}
	}
	return Range{}, false
}

// ContentType returns the media type of a Content-Type header, lower case
// and without parameters; "" when the header is empty. A value whose
// parameters do not parse is returned whole (lower case, trimmed), so it
// matches no media type and the request is refused with 415, as
// kube-apiserver refuses one mime.ParseMediaType rejects (k8s.io/apiserver,
// pkg/endpoints/handlers/negotiation, NegotiateInputSerializerForMediaType).
func ContentType(header string) string {
	if header == "" {
		return ""
	}
	mt, _, err := mime.ParseMediaType(header)
	if err != nil {
		return strings.ToLower(strings.TrimSpace(header))
	}
	return mt
}
