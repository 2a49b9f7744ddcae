package strictdecode

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	kjson "sigs.k8s.io/json"
)

// Decode decodes the document into `into`, a pointer to a Go value with json
// tags, with sigs.k8s.io/json's UnmarshalStrict, exactly as kube-apiserver
// does for a typed object.
//
// A fatal error (bad syntax, a wrong type) is returned as err: the
// sigs.k8s.io/json error itself, so its text is upstream's. Problems are then
// not reported, as upstream reports none either. The one change is in a
// type error's field path: the hops through dnsplane's shadowing wrapper
// structs are removed (see upstreamTypeError), because upstream's types have
// none, so the text is what kube-apiserver says for the same body.
//
// Otherwise every unknown and duplicate field is returned (sigs.k8s.io/json
// de-duplicates them and stops at 100), in upstream order, with positions
// filled in; `into` then holds what a non-strict decode gives: unknown
// fields dropped, the last duplicate wins.
func (d *Document) Decode(into any) (problems []FieldProblem, err error) {
	// The decoder calls the UnmarshalJSON methods of the target's types on
	// untrusted input; a panic in one of them must not take down the API
	// server or the CLI.
	defer func() {
		if r := recover(); r != nil {
			problems, err = nil, fmt.Errorf("document %d: decoding panicked: %v", d.index, r)
		}
	}()
	strictErrs, err := kjson.UnmarshalStrict(d.json, into, kjson.DisallowUnknownFields, kjson.DisallowDuplicateFields)
	if err != nil {
		return nil, upstreamTypeError(into, err)
	}
	if len(strictErrs) == 0 {
		return nil, nil
	}
	problems = make([]FieldProblem, len(strictErrs))
	for i, e := range strictErrs {
		problems[i] = toProblem(e)
	}
	d.locate(problems)
	return problems, nil
}

// toProblem splits a strict error back into its type and path. The error
// text is `<type> "<path>"`, with the path strconv.Quote'd.
func toProblem(err error) FieldProblem {
	var fe kjson.FieldError
	if !errors.As(err, &fe) {
		return FieldProblem{Type: ProblemType(err.Error())}
	}
	// The type/path split below relies on the FieldError's own text, not on
	// that of anything wrapping it.
	msg := fe.Error()
	path := fe.FieldPath()
	typ, found := strings.CutSuffix(msg, " "+strconv.Quote(path))
	if !found {
		typ = msg
	}
	return FieldProblem{Type: ProblemType(typ), Path: path}
}

// locate fills in the positions of problems with one scan of the document,
// only when there are problems, so a clean decode never pays for it.
func (d *Document) locate(problems []FieldProblem) {
	want := make([]string, len(problems))
	for i, p := range problems {
		want[i] = p.Path
	}
	found, err := findPaths(d.json, want)
	if err != nil {
		return
	}
	for i := range problems {
		p := &problems[i]
		occ := found[p.Path]
		if len(occ) == 0 {
			continue
		}
		e := occ[0]
		if p.Type == DuplicateField {
			e = firstRepeat(occ)
		}
		p.Pos = d.posOf(e.off)
	}
}

// firstRepeat returns the first occurrence that repeats a key of the same
// object. The same path can also occur under a duplicated ancestor (two
// "spec" objects each with "paused"), which is not this duplicate.
func firstRepeat(occ occurrences) pathEntry {
	seen := make(map[int]struct{}, len(occ))
	for _, e := range occ {
		if _, ok := seen[e.parent]; ok {
			return e
		}
		seen[e.parent] = struct{}{}
	}
	return occ[len(occ)-1]
}
