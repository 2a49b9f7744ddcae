package strictdecode

import (
	"fmt"
	"sync"

	kjson "sigs.k8s.io/json"
)

// Document is one value from an input: its JSON form plus a way to find
// positions by field path. A Document is safe for concurrent use.
type Document struct {
	index  int
	format Format
	start  Position
	json   []byte

	// posOf maps a byte offset in json to where that text came from. For
	// JSON input it counts lines from start; for YAML it looks the offset
	// up in the marks written by the converter.
	posOf func(off int) Position

	// positions caches Position results: each miss scans the document.
	mu        sync.Mutex
	positions map[string]Position
}

// Index is the 0-based number of the document among those Split returned.
func (d *Document) Index() int { return d.index }

// Start is where the document's value starts in the input.
func (d *Document) Start() Position { return d.start }

// Format is the syntax the document was read from.
func (d *Document) Format() Format { return d.format }

// JSON is the document as JSON. For YAML it was written once from the parsed
// node tree; duplicate keys are kept. The caller must not modify it.
func (d *Document) JSON() []byte { return d.json }

// TypeMeta reads apiVersion and kind. Missing fields give empty strings; a
// document that is not an object, or whose apiVersion or kind is not a
// string, is an error.
func (d *Document) TypeMeta() (apiVersion, kind string, err error) {
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	// Case-sensitive like the real decode, so `Kind` is not taken for kind.
	if err := kjson.UnmarshalCaseSensitivePreserveInts(d.json, &tm); err != nil {
		return "", "", fmt.Errorf("document %d at %v: reading apiVersion and kind: %w", d.index, d.start, err)
	}
	return tm.APIVersion, tm.Kind, nil
}

// Position returns where the field or item at a Kubernetes field path such
// as "spec.dnsConfig.searches[0]" is: the key of an object member, or the
// start of an array item. Map keys may be written `.key` (as sigs.k8s.io/json
// does) or `[key]` (as field.Path does). If the path occurs more than once
// (duplicate keys), the last occurrence is returned, because that is the
// value the decoded object holds. The empty path is the document itself.
//
// Positions are not indexed in advance: the first lookup of a path scans
// the document once, and the result is cached.
func (d *Document) Position(path string) (Position, bool) {
	if path == "" {
		return d.start, true
	}
	d.mu.Lock()
	p, cached := d.positions[path]
	d.mu.Unlock()
	if cached {
		return p, !p.IsZero()
	}
	candidates := readings(path)
	found, err := findPaths(d.json, candidates)
	if err == nil {
		for _, c := range candidates {
			if occ := found[c]; len(occ) > 0 {
				p = d.posOf(occ[len(occ)-1].off)
				break
			}
		}
	}
	d.mu.Lock()
	if d.positions == nil {
		d.positions = make(map[string]Position)
	}
	d.positions[path] = p
	d.mu.Unlock()
	return p, !p.IsZero()
}
