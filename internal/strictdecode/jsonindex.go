package strictdecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// pathEntry is one place a field path occurs in a JSON document.
type pathEntry struct {
	// off is the byte offset of the key's opening quote for an object
	// member, or of the first byte of an array item.
	off int
	// parent is the offset of the enclosing '{' or '['. Two members with
	// the same path and the same parent are a duplicate key; the same path
	// under different parents comes from a duplicated ancestor.
	parent int
}

type occurrences []pathEntry

// findPaths scans a JSON document once and returns where each wanted path
// occurs, in document order; paths are written the way sigs.k8s.io/json
// writes them. Only the wanted paths are kept, so memory does not grow with
// the document (a full index would hold a path string for every node, which
// for deep documents is quadratic).
func findPaths(data []byte, want []string) (map[string]occurrences, error) {
	x := &jsonScanner{
		data:  data,
		want:  make(map[string]occurrences, len(want)),
		wantN: make(map[int]bool, len(want)),
	}
	for _, w := range want {
		x.want[w] = nil
		x.wantN[len(w)] = true
	}
	if err := x.document(); err != nil {
		return nil, err
	}
	return x.want, nil
}

// depthError is nesting deeper than MaxDepth.
type depthError struct {
	off  int
	path string
}

func (e *depthError) Error() string {
	return fmt.Sprintf("nesting deeper than %d levels at %s", MaxDepth, displayPath(e.path))
}

// jsonDepthError returns a *depthError naming the path if data, a valid JSON
// value, nests deeper than MaxDepth, and nil otherwise.
func jsonDepthError(data []byte) error {
	if !jsonTooDeep(data) {
		return nil
	}
	// The rare case: scan again, this time building paths, to name where.
	x := &jsonScanner{data: data}
	var de *depthError
	if err := x.document(); errors.As(err, &de) {
		return de
	}
	return &depthError{path: "(unknown)"}
}

// jsonTooDeep is the cheap check run on every JSON document: it only counts
// brackets outside strings.
func jsonTooDeep(data []byte) bool {
	// Nesting needs an opening bracket per level; counting them is a
	// vectorised scan, so ordinary documents skip the byte loop below.
	if bytes.Count(data, []byte{'{'})+bytes.Count(data, []byte{'['}) <= MaxDepth {
		return false
	}
	depth := 0
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > MaxDepth {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

// jsonScanner walks a JSON value, keeping the current field path. With want
// set it records where those paths occur; without, it only checks depth.
// The input has already been validated, but the scanner still checks every
// byte it relies on, so bad input gives an error and never a panic.
type jsonScanner struct {
	data  []byte
	i     int
	path  []byte
	want  map[string]occurrences
	wantN map[int]bool // lengths of the wanted paths: a cheap first filter
}

var errBadJSON = errors.New("malformed JSON")

func (x *jsonScanner) document() error {
	x.space()
	return x.value(1, false)
}

func (x *jsonScanner) space() {
	for x.i < len(x.data) {
		switch x.data[x.i] {
		case ' ', '\t', '\r', '\n':
			x.i++
		default:
			return
		}
	}
}

func (x *jsonScanner) record(off, parent int) {
	if !x.wantN[len(x.path)] {
		return
	}
	// string(x.path) in a map index expression does not allocate.
	if occ, ok := x.want[string(x.path)]; ok {
		x.want[string(x.path)] = append(occ, pathEntry{off, parent})
	}
}

// value scans the value at x.i. depth is the nesting level a container here
// would have; nested says whether a path segment has been pushed, which is
// when sigs.k8s.io/json puts a '.' before a key.
func (x *jsonScanner) value(depth int, nested bool) error {
	if x.i >= len(x.data) {
		return errBadJSON
	}
	switch x.data[x.i] {
	case '{':
		return x.object(depth, nested)
	case '[':
		return x.array(depth)
	case '"':
		_, _, err := x.str()
		return err
	default:
		// Number or literal: everything up to a delimiter.
		start := x.i
		for x.i < len(x.data) {
			switch x.data[x.i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				goto done
			}
			x.i++
		}
	done:
		if x.i == start {
			return errBadJSON
		}
		return nil
	}
}

func (x *jsonScanner) tooDeep(depth int) error {
	if depth > MaxDepth {
		return &depthError{off: x.i, path: string(x.path)}
	}
	return nil
}

func (x *jsonScanner) object(depth int, nested bool) error {
	if err := x.tooDeep(depth); err != nil {
		return err
	}
	open := x.i
	x.i++
	base := len(x.path)
	defer func() { x.path = x.path[:base] }()
	for first := true; ; first = false {
		x.space()
		if x.i >= len(x.data) {
			return errBadJSON
		}
		if x.data[x.i] == '}' && first {
			x.i++
			return nil
		}
		keyOff := x.i
		key, escaped, err := x.str()
		if err != nil {
			return err
		}
		x.path = x.path[:base]
		if nested {
			x.path = append(x.path, '.')
		}
		if escaped {
			x.path = append(x.path, unquoteKey(key)...)
		} else {
			x.path = append(x.path, key...)
		}
		x.record(keyOff, open)
		x.space()
		if x.i >= len(x.data) || x.data[x.i] != ':' {
			return errBadJSON
		}
		x.i++
		x.space()
		if err := x.value(depth+1, true); err != nil {
			return err
		}
		x.path = x.path[:base]
		x.space()
		if x.i >= len(x.data) {
			return errBadJSON
		}
		switch x.data[x.i] {
		case ',':
			x.i++
		case '}':
			x.i++
			return nil
		default:
			return errBadJSON
		}
	}
}

func (x *jsonScanner) array(depth int) error {
	if err := x.tooDeep(depth); err != nil {
		return err
	}
	open := x.i
	x.i++
	base := len(x.path)
	defer func() { x.path = x.path[:base] }()
	for n := 0; ; n++ {
		x.space()
		if x.i >= len(x.data) {
			return errBadJSON
		}
		if x.data[x.i] == ']' && n == 0 {
			x.i++
			return nil
		}
		x.path = append(x.path[:base], '[')
		x.path = strconv.AppendInt(x.path, int64(n), 10)
		x.path = append(x.path, ']')
		x.record(x.i, open)
		if err := x.value(depth+1, true); err != nil {
			return err
		}
		x.path = x.path[:base]
		x.space()
		if x.i >= len(x.data) {
			return errBadJSON
		}
		switch x.data[x.i] {
		case ',':
			x.i++
		case ']':
			x.i++
			return nil
		default:
			return errBadJSON
		}
	}
}

// str scans a string at x.i and returns its raw text: without quotes when
// it needs no unescaping, or with quotes (escaped=true) when it does.
func (x *jsonScanner) str() (raw []byte, escaped bool, err error) {
	if x.i >= len(x.data) || x.data[x.i] != '"' {
		return nil, false, errBadJSON
	}
	start := x.i
	x.i++
	for x.i < len(x.data) {
		switch x.data[x.i] {
		case '\\':
			escaped = true
			x.i += 2
			continue
		case '"':
			x.i++
			if escaped {
				return x.data[start:x.i], true, nil
			}
			body := x.data[start+1 : x.i-1]
			if !utf8.Valid(body) {
				// Let the decoder's rules replace invalid bytes.
				return x.data[start:x.i], true, nil
			}
			return body, false, nil
		}
		x.i++
	}
	return nil, false, errBadJSON
}

// unquoteKey decodes a quoted JSON string with escapes or invalid UTF-8 the
// way the JSON decoder does, so the key text matches sigs.k8s.io/json's
// paths. It is rare, so it uses encoding/json rather than a second
// unescaper.
func unquoteKey(quoted []byte) string {
	var s string
	if err := json.Unmarshal(quoted, &s); err != nil {
		return string(quoted)
	}
	return s
}

// displayPath shortens very long paths (deep nesting) for messages.
func displayPath(p string) string {
	const keep = 60
	if p == "" {
		return "the top level"
	}
	if len(p) <= 2*keep+3 {
		return p
	}
	head, tail := p[:keep], p[len(p)-keep:]
	for !utf8.ValidString(head) && len(head) > 0 {
		head = head[:len(head)-1]
	}
	for !utf8.ValidString(tail) && len(tail) > 0 {
		tail = tail[1:]
	}
	return head + "..." + tail
}
