package strictdecode

import (
	"slices"
	"strings"
)

// Field paths come in two spellings. sigs.k8s.io/json (and so
// FieldProblem.Path) writes map keys like struct fields:
// metadata.labels.app.kubernetes.io/name. k8s.io/apimachinery's field.Path,
// used by validation errors, writes them in brackets:
// metadata.labels[app.kubernetes.io/name]. Neither escapes anything. Written
// the sigs.k8s.io/json way, a path has one spelling once it is known which
// bracketed numbers are array indexes and which are map keys such as "0";
// readings lists those choices, to be looked up in the document.

// pathToken is one segment of a path as written: `.name`/`name`, or `[text]`.
type pathToken struct {
	text    string
	bracket bool
}

// maxAmbiguous bounds how many bracketed numbers are tried both ways (2^n
// readings); later ones are taken as array indexes.
const maxAmbiguous = 6

// readings returns the sigs.k8s.io/json spellings path may stand for, most
// likely first: the path as given, then with every bracketed number an
// index and every other bracket a key, then the other choices.
func readings(path string) []string {
	out := []string{path}
	tokens, ok := tokenizePath(path)
	if !ok {
		return out
	}
	var ambiguous []int
	for i, t := range tokens {
		if t.bracket && isIndex(t.text) && len(ambiguous) < maxAmbiguous {
			ambiguous = append(ambiguous, i)
		}
	}
	var b strings.Builder
	for mask := 0; mask < 1<<len(ambiguous); mask++ {
		b.Reset()
		started := false
		next := 0
		for i, t := range tokens {
			asKey := !t.bracket || !isIndex(t.text)
			if next < len(ambiguous) && ambiguous[next] == i {
				asKey = mask&(1<<next) != 0
				next++
			}
			if asKey {
				if started {
					b.WriteByte('.')
				}
				b.WriteString(t.text)
			} else {
				b.WriteByte('[')
				b.WriteString(t.text)
				b.WriteByte(']')
			}
			started = true
		}
		if r := b.String(); !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// tokenizePath splits a path into segments. A bracket segment ends at the
// first ']' followed by the end, '.' or '[', so keys may contain ']'.
func tokenizePath(p string) ([]pathToken, bool) {
	var out []pathToken
	i := 0
	if p != "" && p[0] != '[' && p[0] != '.' {
		j := nextDelim(p, 0)
		out = append(out, pathToken{text: p[:j]})
		i = j
	}
	for i < len(p) {
		switch p[i] {
		case '.':
			j := nextDelim(p, i+1)
			out = append(out, pathToken{text: p[i+1 : j]})
			i = j
		case '[':
			end := -1
			for k := i + 1; k < len(p); k++ {
				if p[k] == ']' && (k+1 == len(p) || p[k+1] == '.' || p[k+1] == '[') {
					end = k
					break
				}
			}
			if end < 0 {
				return nil, false
			}
			out = append(out, pathToken{text: p[i+1 : end], bracket: true})
			i = end + 1
		default:
			return nil, false
		}
	}
	return out, true
}

func nextDelim(p string, from int) int {
	if j := strings.IndexAny(p[from:], ".["); j >= 0 {
		return from + j
	}
	return len(p)
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
