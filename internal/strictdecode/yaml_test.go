package strictdecode

import (
	"strings"
	"testing"
)

// yamlJSON converts a one-document YAML input and returns its JSON.
func yamlJSON(t *testing.T, in string) string {
	t.Helper()
	docs, err := SplitFormat([]byte(in), YAML)
	if err != nil {
		t.Fatalf("%q: %v", in, err)
	}
	if len(docs) != 1 {
		t.Fatalf("%q: %d documents", in, len(docs))
	}
	return string(docs[0].JSON())
}

func TestYAMLScalars(t *testing.T) {
	t.Parallel()
	tests := []struct{ yaml, json string }{
		// null
		{"~", "null"}, {"null", "null"}, {"Null", "null"}, {"NULL", "null"}, {"", "null"}, {"!!null ''", "null"},
		// bool: the YAML 1.1 words, as sigs.k8s.io/yaml reads them
		{"true", "true"}, {"True", "true"}, {"TRUE", "true"}, {"false", "false"}, {"FALSE", "false"},
		{"yes", "true"}, {"no", "false"}, {"on", "true"}, {"off", "false"}, {"y", "true"}, {"N", "false"},
		{"'yes'", `"yes"`}, {"!!str on", `"on"`}, {"tRUE", `"tRUE"`}, {"yES", `"yES"`},
		{"!!bool true", "true"},
		// int
		{"0", "0"}, {"-17", "-17"}, {"+17", "17"}, {"1_000", "1000"}, {"0x1F", "31"}, {"0o17", "15"}, {"017", "15"},
		{"0b101", "5"}, {"-0b101", "-5"}, {"9223372036854775807", "9223372036854775807"},
		{"18446744073709551615", "18446744073709551615"}, {"!!int '12'", "12"},
		// float, formatted like encoding/json formats a float64
		{"1.5", "1.5"}, {"1.0", "1"}, {"1e3", "1000"}, {"-.5", "-0.5"}, {".5", "0.5"}, {"1e21", "1e+21"},
		{"1.5e-7", "1.5e-7"}, {"123456789012345678901234567890", "1.2345678901234568e+29"}, {"!!float 1", "1"},
		{"-0.0", "-0"},
		// strings
		{`"80"`, `"80"`}, {"'true'", `"true"`}, {"!!str 12", `"12"`}, {"hello world", `"hello world"`},
		{"2001-12-14", `"2001-12-14"`}, {"2001-12-14T21:59:43.10Z", `"2001-12-14T21:59:43.10Z"`},
		{"!!timestamp 2001-12-14", `"2001-12-14"`},
		{"!custom 12", `"12"`}, {"1.2.3", `"1.2.3"`}, {"0x", `"0x"`}, {"+", `"+"`}, {"-x", `"-x"`}, {".", `"."`},
		{"1_0.5", "10.5"}, {"._5", `"._5"`}, {"Inf", `"Inf"`}, {"+Inf", `"+Inf"`}, {"NaN", `"NaN"`},
		{"<<", `"<<"`}, {"!!binary aGVsbG8=", `"hello"`}, {"!!binary /w==", `"\ufffd"`},
		{`"a\"b\\c\n\t\u0001é"`, `"a\"b\\c\n\t\u0001é"`},
		{"|\n  line1\n  line2\n", `"line1\nline2\n"`},
		{">\n  folded\n  text\n", `"folded text\n"`},
	}
	for _, tt := range tests {
		t.Run(tt.yaml, func(t *testing.T) {
			t.Parallel()
			got := yamlJSON(t, "v: "+tt.yaml)
			want := `{"v":` + tt.json + `}`
			if got != want {
				t.Errorf("v: %s => %s, want %s", tt.yaml, got, want)
			}
		})
	}
}

func TestYAMLKeys(t *testing.T) {
	t.Parallel()
	tests := []struct{ yaml, json string }{
		{"1: x", `{"1":"x"}`},
		{"0x10: x", `{"16":"x"}`},
		{"true: x", `{"true":"x"}`},
		{"False: x", `{"false":"x"}`},
		{"yes: x", `{"true":"x"}`},
		{"'yes': x", `{"yes":"x"}`},
		{"1.5: x", `{"1.5":"x"}`},
		{"0.1: x", `{"0.1":"x"}`},
		{"1e3: x", `{"1000":"x"}`},
		{"123456789.0: x", `{"1.2345679e+08":"x"}`},
		{".inf: x", `{".inf":"x"}`},
		{"-.inf: x", `{"-.inf":"x"}`},
		{".nan: x", `{".nan":"x"}`},
		{`"quoted key": x`, `{"quoted key":"x"}`},
		{"2001-12-14: x", `{"2001-12-14":"x"}`},
		{"a: &k key\n*k : v", `{"a":"key","key":"v"}`},
		{"'<<': x", `{"<<":"x"}`},
		{"a\"b: x", `{"a\"b":"x"}`},
	}
	for _, tt := range tests {
		if got := yamlJSON(t, tt.yaml); got != tt.json {
			t.Errorf("%q => %s, want %s", tt.yaml, got, tt.json)
		}
	}
}

func TestYAMLMergeAndAliases(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, yaml, json string }{
		{
			name: "merge one mapping; own keys win wherever they are",
			yaml: "base: &b {a: 1, b: 2}\nx:\n  b: 3\n  <<: *b\n  c: 4\n",
			json: `{"base":{"a":1,"b":2},"x":{"b":3,"c":4,"a":1}}`,
		},
		{
			name: "merge a sequence: the earlier mapping wins",
			yaml: "p: &p {a: 1}\nq: &q {a: 2, b: 2}\nx: {<<: [*p, *q]}\n",
			json: `{"p":{"a":1},"q":{"a":2,"b":2},"x":{"a":1,"b":2}}`,
		},
		{
			name: "merge an inline mapping",
			yaml: "x: {<<: {a: 1}, b: 2}\n",
			json: `{"x":{"b":2,"a":1}}`,
		},
		{
			name: "nested merge",
			yaml: "p: &p {a: 1}\nq: &q {<<: *p, b: 2}\nx: {<<: *q}\n",
			json: `{"p":{"a":1},"q":{"b":2,"a":1},"x":{"b":2,"a":1}}`,
		},
		{
			name: "several merge keys are all merged, in order",
			yaml: "p: &p {a: 1}\nq: &q {a: 2, b: 2}\nx: {<<: *p, <<: *q}\n",
			json: `{"p":{"a":1},"q":{"a":2,"b":2},"x":{"a":1,"b":2}}`,
		},
		{
			name: "explicit merge tag",
			yaml: "p: &p {a: 1}\nx: {!!merge <<: *p}\n",
			json: `{"p":{"a":1},"x":{"a":1}}`,
		},
		{
			name: "duplicates are kept in order",
			yaml: "a: 1\nb: 2\na: 3\n",
			json: `{"a":1,"b":2,"a":3}`,
		},
		{
			name: "alias to a scalar and a sequence",
			yaml: "a: &s str\nb: &l [1, 2]\nc: *s\nd: *l\n",
			json: `{"a":"str","b":[1,2],"c":"str","d":[1,2]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := yamlJSON(t, tt.yaml); got != tt.json {
				t.Errorf("got  %s\nwant %s", got, tt.json)
			}
		})
	}
}

// Merged keys are located where they are written (in the anchored mapping),
// and duplicates written through a merge are not duplicates.
func TestYAMLMergePositions(t *testing.T) {
	t.Parallel()
	in := `defaults: &d
  paused: true
  bogus: 1
spec:
  <<: *d
  paused: false
`
	doc := splitOne(t, in)
	problems, err := doc.Decode(newDeployment())
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(describe(problems), "\n")
	want := `unknown field "defaults" @1:1` + "\n" + `unknown field "spec.bogus" @3:3`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
