package strictdecode

import "strconv"

// Format is the syntax of an input.
type Format int

// The input formats Split recognises.
const (
	JSON Format = iota
	YAML
)

func (f Format) String() string {
	switch f {
	case JSON:
		return "JSON"
	case YAML:
		return "YAML"
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}

// Position is 1-based. The zero Position means "unknown"; a Position with a
// Line and a zero Column knows only the line.
type Position struct{ Line, Column int }

// IsZero reports whether p is unknown.
func (p Position) IsZero() bool { return p.Line == 0 }

func (p Position) String() string {
	if p.Column == 0 {
		return "line " + strconv.Itoa(p.Line)
	}
	return "line " + strconv.Itoa(p.Line) + ", column " + strconv.Itoa(p.Column)
}

// ProblemType says what is wrong with a field. The values are the words
// sigs.k8s.io/json puts in front of the path.
type ProblemType string

// The problems UnmarshalStrict reports; Error writes each followed by the
// quoted path.
const (
	UnknownField   ProblemType = "unknown field"
	DuplicateField ProblemType = "duplicate field"
)

// FieldProblem is one unknown or duplicate field.
type FieldProblem struct {
	Type ProblemType
	// Path is the field path exactly as sigs.k8s.io/json writes it, e.g.
	// spec.template.spec.containers[0].foo.
	Path string
	// Pos is where the key is; for a duplicate, the first repeated key. It is
	// zero if the key could not be found.
	Pos Position
}

// Error is exactly the upstream text: `unknown field "spec.foo"`.
func (p FieldProblem) Error() string {
	return string(p.Type) + " " + strconv.Quote(p.Path)
}
