package strictdecode

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestDetect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want Format
	}{
		{"{}", JSON},
		{" \n\t\r[1]", JSON},
		{"a: 1", YAML},
		{"---\n{}", YAML},
		{"# {\n", YAML},
		{"", YAML},
		{"\"str\"", YAML},
	}
	for _, tt := range tests {
		if got := Detect([]byte(tt.in)); got != tt.want {
			t.Errorf("Detect(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestSplitDocuments(t *testing.T) {
	t.Parallel()
	type doc struct {
		json  string
		start Position
	}
	tests := []struct {
		name   string
		in     string
		format Format
		want   []doc
	}{
		{
			name: "YAML stream with comments and empty documents",
			in: `# leading comment
---
# only a comment
---
---
apiVersion: v1
kind: ConfigMap # trailing
data: {a: b}
---
null
---
  # indented comment
- 1
- two
...
---
kind: Pod
`,
			format: YAML,
			want: []doc{
				{`{"apiVersion":"v1","kind":"ConfigMap","data":{"a":"b"}}`, Position{6, 1}},
				{`[1,"two"]`, Position{13, 1}},
				{`{"kind":"Pod"}`, Position{17, 1}},
			},
		},
		{
			name:   "YAML document without a marker",
			in:     "\n\nkind: Pod\n",
			format: YAML,
			want:   []doc{{`{"kind":"Pod"}`, Position{3, 1}}},
		},
		{
			name:   "JSON concatenated objects",
			in:     "{\"kind\":\"A\"}\n  {\"kind\":\n\"B\"}{\"kind\":\"C\"} null",
			format: JSON,
			want: []doc{
				{`{"kind":"A"}`, Position{1, 1}},
				{"{\"kind\":\n\"B\"}", Position{2, 3}},
				{`{"kind":"C"}`, Position{3, 5}},
			},
		},
		{
			name:   "a JSON array is one document",
			in:     `  [{"kind":"A"},{"kind":"B"}]`,
			format: JSON,
			want:   []doc{{`[{"kind":"A"},{"kind":"B"}]`, Position{1, 3}}},
		},
		{
			name:   "JSON-looking YAML falls back to YAML",
			in:     "{kind: Pod, metadata: {name: a}}\n",
			format: YAML,
			want:   []doc{{`{"kind":"Pod","metadata":{"name":"a"}}`, Position{1, 1}}},
		},
		{
			name:   "JSON then YAML documents are YAML",
			in:     "{\"kind\": \"A\"}\n---\nkind: B\n",
			format: YAML,
			want:   []doc{{`{"kind":"A"}`, Position{1, 1}}, {`{"kind":"B"}`, Position{3, 1}}},
		},
		{name: "empty input", in: "", format: YAML},
		{name: "only comments", in: "# nothing\n# here\n", format: YAML},
		{name: "only whitespace", in: " \n \r\n", format: YAML},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			docs, err := Split([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if len(docs) != len(tt.want) {
				t.Fatalf("got %d documents, want %d", len(docs), len(tt.want))
			}
			for i, d := range docs {
				if d.Index() != i {
					t.Errorf("doc %d: Index() = %d", i, d.Index())
				}
				if d.Format() != tt.format {
					t.Errorf("doc %d: Format() = %v, want %v", i, d.Format(), tt.format)
				}
				if string(d.JSON()) != tt.want[i].json {
					t.Errorf("doc %d: JSON() = %s, want %s", i, d.JSON(), tt.want[i].json)
				}
				if d.Start() != tt.want[i].start {
					t.Errorf("doc %d: Start() = %v, want %v", i, d.Start(), tt.want[i].start)
				}
			}
		})
	}
}

func TestTypeMeta(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, apiVersion, kind, err string
	}{
		{in: "apiVersion: apps/v1\nkind: Deployment\n", apiVersion: "apps/v1", kind: "Deployment"},
		{in: `{"kind":"Pod","apiVersion":"v1","spec":{"kind":"x"}}`, apiVersion: "v1", kind: "Pod"},
		{in: "Kind: Pod\n", kind: ""},
		{in: "kind: 1\n", err: "cannot unmarshal number"},
		{in: "- a\n", err: "cannot unmarshal array"},
	}
	for _, tt := range tests {
		doc := splitOne(t, tt.in)
		av, k, err := doc.TypeMeta()
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: err = %v, want containing %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || av != tt.apiVersion || k != tt.kind {
			t.Errorf("%q: got %q %q %v", tt.in, av, k, err)
		}
	}
}

// bigDocument is a single document of about size bytes.
func bigDocument(format Format, size int) []byte {
	var b bytes.Buffer
	value := strings.Repeat("x", 1000)
	if format == JSON {
		b.WriteString(`{"kind":"ConfigMap","data":{`)
		for i := 0; b.Len() < size; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%q:%q", fmt.Sprint("k", i), value)
		}
		b.WriteString("}}")
		return b.Bytes()
	}
	b.WriteString("kind: ConfigMap\ndata:\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "  k%d: %s\n", i, value)
	}
	return b.Bytes()
}

// nested returns n levels of nesting.
func nested(opening, closing, inner string, n int) string {
	return strings.Repeat(opening, n) + inner + strings.Repeat(closing, n)
}

// billionLaughs is the classic alias bomb: ten levels of ten aliases each.
func billionLaughs() string {
	var b strings.Builder
	b.WriteString(`a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [", i, i)
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	return b.String()
}

// mergeBomb writes nothing new at each level but makes the converter
// revisit every merged key 10^n times.
func mergeBomb() string {
	var b strings.Builder
	b.WriteString("m0: &m0 {k: v}\n")
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&b, "m%d: &m%d {<<: [", i, i)
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "*m%d", i-1)
		}
		b.WriteString("]}\n")
	}
	return b.String()
}

func TestSplitBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		in     []byte
		format *Format // nil: Split's detection
		want   []string
		pos    Position
	}{
		{name: "not YAML", in: []byte("a: b: c\n"), want: []string{"invalid YAML", "mapping values are not allowed"}, pos: Position{Line: 1}},
		{name: "not YAML, later line", in: []byte("x: 1\n\na: b: c\n"), want: []string{"invalid YAML", "mapping values are not allowed"}, pos: Position{Line: 3}},
		// yaml.v3 reports the line before the fault for this parser error;
		// it is kept as reported, like every Kubernetes tool prints it.
		{name: "not YAML, parser error", in: []byte("a: 1\nb:\n  - x\n  y: 2\n"), want: []string{"invalid YAML", "did not find expected '-' indicator"}, pos: Position{Line: 2}},
		{name: "unknown anchor", in: []byte("a: 1\nb: *nope\n"), want: []string{"invalid YAML", "unknown anchor 'nope'"}, pos: Position{2, 4}},
		{name: "control character", in: []byte("a: 1\nb: \x01\n"), want: []string{"invalid YAML", "control characters are not allowed"}, pos: Position{2, 4}},
		{name: "invalid UTF-8", in: []byte("a: \xff\n"), want: []string{"invalid YAML", "invalid leading UTF-8 octet"}, pos: Position{1, 4}},
		{name: "not JSON", in: []byte(`{"a": 1,, "b": 2}`), want: []string{"invalid JSON", "invalid character ','"}, pos: Position{1, 9}},
		{name: "not JSON, forced", in: []byte(`{"a": }`), format: ptr(JSON), want: []string{"invalid JSON", "invalid character '}'"}, pos: Position{1, 7}},
		{name: "truncated JSON", in: []byte("{\"a\": {\"b\":\n 1}"), want: []string{"invalid JSON", "unexpected end of input"}, pos: Position{2, 4}},
		{name: "truncated second JSON document", in: []byte(`{"a":1} {"b":`), want: []string{"invalid JSON", "unexpected end of input"}, pos: Position{1, 14}},
		{name: "binary", in: []byte("kind: Pod\nmetadata:\x00\n"), want: []string{"binary data"}, pos: Position{2, 10}},
		{name: "binary JSON", in: []byte("{\"a\":\"\x00\"}"), want: []string{"binary data"}, pos: Position{1, 7}},
		{name: "10 MB JSON document", in: bigDocument(JSON, 10<<20), want: []string{"document 0 is 1048", "larger than the limit of 3145728 bytes"}, pos: Position{1, 1}},
		{name: "10 MB YAML document", in: append([]byte("kind: A\n---\n"), bigDocument(YAML, 10<<20)...), want: []string{"YAML document 1 is 1048", "larger than the limit of 3145728 bytes"}, pos: Position{Line: 2}},
		{name: "deep JSON arrays", in: []byte(nested("[", "]", "1", MaxDepth+1)), want: []string{"nesting deeper than 1000 levels at [0][0][0]", "...[0][0]"}, pos: Position{1, 1001}},
		{name: "deep JSON objects", in: []byte(nested(`{"a":`, "}", "1", MaxDepth+1)), want: []string{"nesting deeper than 1000 levels at a.a.a", "...a.a"}, pos: Position{1, 5001}},
		{name: "deep YAML", in: []byte("x: " + nested("[", "]", "1", MaxDepth)), want: []string{"nesting deeper than 1000 levels", "at x[0][0]"}, pos: Position{1, 1003}},
		{name: "billion laughs", in: []byte(billionLaughs()), want: []string{"YAML aliases expand to more than 3145728 bytes"}},
		{name: "merge bomb", in: []byte(mergeBomb()), want: []string{"YAML aliases expand to more than 3145728 bytes"}},
		{name: "alias cycle", in: []byte("a: &a [1, *a]\n"), want: []string{`anchor "a" value contains itself`}, pos: Position{1, 11}},
		{name: "merge cycle", in: []byte("a: &a {x: 1, <<: *a}\n"), want: []string{`anchor "a" value contains itself`}},
		{name: "infinity", in: []byte("spec:\n  x: .inf\n"), want: []string{"at spec.x: .inf cannot be represented in JSON"}, pos: Position{2, 6}},
		{name: "null key", in: []byte("~: 1\n"), want: []string{"unsupported map key: null"}, pos: Position{1, 1}},
		{name: "mapping key", in: []byte("? {a: 1}\n: 1\n"), want: []string{"unsupported map key"}, pos: Position{1, 3}},
		{name: "bad merge value", in: []byte("a: {<<: 1}\n"), want: []string{"map merge requires map or sequence of maps"}},
		{name: "bad explicit tag", in: []byte("a: !!int abc\n"), want: []string{`cannot decode !!str "abc" as !!int`}, pos: Position{1, 4}},
		{name: "bad binary", in: []byte("a: !!binary '%%'\n"), want: []string{"invalid base64"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			var docs []*Document
			var err error
			if tt.format != nil {
				docs, err = SplitFormat(tt.in, *tt.format)
			} else {
				docs, err = Split(tt.in)
			}
			if err == nil {
				t.Fatalf("no error; %d documents", len(docs))
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error is not an *InputError: %T", err)
			}
			if !tt.pos.IsZero() && ie.Pos != tt.pos {
				t.Errorf("position %v, want %v", ie.Pos, tt.pos)
			}
			if len(err.Error()) > 1000 {
				t.Errorf("error is %d bytes long", len(err.Error()))
			}
			// Not a benchmark: only a guard that limits stop the work
			// early (the bombs would otherwise take minutes).
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// Nesting exactly at the limit is fine.
func TestSplitMaxDepthAllowed(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		nested("[", "]", "1", MaxDepth),
		"x: " + nested("[", "]", "1", MaxDepth-1),
	} {
		if _, err := Split([]byte(in)); err != nil {
			t.Errorf("depth %d: %v", MaxDepth, err)
		}
	}
}

// A document just under the limit is accepted.
func TestSplitLargeDocumentAllowed(t *testing.T) {
	t.Parallel()
	for _, f := range []Format{JSON, YAML} {
		in := bigDocument(f, MaxDocumentSize-2000)
		docs, err := SplitFormat(in, f)
		if err != nil || len(docs) != 1 {
			t.Fatalf("%v: %d docs, %v", f, len(docs), err)
		}
	}
}

// Aliases that expand within the limit are fine, and expand fully.
func TestSplitAliasesWithinLimit(t *testing.T) {
	t.Parallel()
	doc := splitOne(t, "a: &a {x: [1, 2]}\nb: [*a, *a]\n")
	if got, want := string(doc.JSON()), `{"a":{"x":[1,2]},"b":[{"x":[1,2]},{"x":[1,2]}]}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
