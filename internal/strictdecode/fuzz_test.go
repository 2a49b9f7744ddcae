package strictdecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	yaml3 "go.yaml.in/yaml/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// fuzzTargets are the types the fuzzers decode into, each with the
// k8s.io/api type kube-apiserver would use.
var fuzzTargets = []struct {
	name           string
	ours, upstream func() any
}{
	{"Deployment", newDeployment, func() any { return &appsv1.Deployment{} }},
	{"Pod", newPod, func() any { return &corev1.Pod{} }},
}

func addSeeds(f *testing.F, seeds ...string) {
	f.Helper()
	for _, s := range seeds {
		f.Add([]byte(s))
	}
}

func FuzzDecodeJSON(f *testing.F) {
	typical, err := yaml.YAMLToJSON([]byte(typicalYAML))
	if err != nil {
		f.Fatal(err)
	}
	addSeeds(f, invJSON, positionJSON, string(typical),
		`{"a":1}{"b":2} null [1]`,
		`{"spec":{"replicas":"x"}}`,
		`{"spec":{"paused":true,"paused":false,"x":{"y":1}},"spec":{}}`,
		`{"metadata":{"labels":{"a.b":"1","a.b":"2","":""}},"":1}`,
		`{"spec":{"containers":[{"name":"a","name":"b","x\u0041":1}]}}`,
		`[{"a":1}]`,
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		// Split with detection too: it may fall back to YAML.
		if docs, err := Split(data); err == nil {
			for _, d := range docs {
				checkDocument(t, d)
			}
		}
		docs, err := SplitFormat(data, JSON)
		if err != nil {
			checkInputError(t, err)
			return
		}
		for _, d := range docs {
			if !json.Valid(d.JSON()) {
				t.Fatalf("document %d is not valid JSON", d.Index())
			}
			checkDocument(t, d)
		}
	})
}

func FuzzDecodeYAML(f *testing.F) {
	addSeeds(f, invYAML, positionYAML, typicalYAML,
		"a: 1\n---\n# c\n---\nb: [1, 2]\n...\n",
		"base: &b {a: 1, b: [x, y]}\nspec:\n  <<: *b\n  c: *b\n",
		"p: &p {a: 1}\nq: &q {a: 2}\nx: {<<: [*p, *q], <<: *p}\n",
		"v: [~, null, yes, on, 0x1F, 0o17, 017, 1_000, 1.0, 1e3, .5, -.inf, 2001-12-14, !!binary aGk=, \"80\"]\n",
		"1: a\ntrue: b\n1.5: c\n? [x]\n: d\n",
		"spec:\n  template:\n    spec:\n      containers:\n      - name: a\n        name: b\n        foo: 1\n",
		"a: !!int '12'\nb: !!float 1\nc: !!str 12\nd: !custom x\ne: !!null ''\n",
		"a: |\n  x\n  y\nb: >-\n  folded\n  text\n",
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, err := SplitFormat(data, YAML)
		if err != nil {
			checkInputError(t, err)
		}
		for _, d := range docs {
			if !json.Valid(d.JSON()) {
				t.Fatalf("document %d is not valid JSON: %s", d.Index(), d.JSON())
			}
			checkDocument(t, d)
		}
		checkAgainstYAMLv3(t, data, docs, err)
	})
}

// checkInputError: Split's errors are InputErrors and short.
func checkInputError(t *testing.T, err error) {
	t.Helper()
	var ie *InputError
	if !errors.As(err, &ie) {
		t.Fatalf("error is %T, not an *InputError: %v", err, err)
	}
	if len(err.Error()) > 2000 {
		t.Fatalf("error is %d bytes", len(err.Error()))
	}
}

// checkDocument decodes d into every fuzz target and checks that:
//   - without a fatal error, the object equals a non-strict decode
//     (Strict and Ignore agree on the object; only the problems differ);
//   - every problem has a position, and Position finds its path;
//   - unless the document uses dnsplane's additions, the fatal error and
//     the problems are exactly those of the upstream type.
func checkDocument(t *testing.T, d *Document) {
	t.Helper()
	for _, target := range fuzzTargets {
		obj := target.ours()
		problems, err := d.Decode(obj)
		if err == nil {
			ignored := target.ours()
			if err := kjson.UnmarshalCaseSensitivePreserveInts(d.JSON(), ignored); err != nil {
				t.Fatalf("%s: strict decode succeeded, non-strict failed: %v", target.name, err)
			}
			if !reflect.DeepEqual(obj, ignored) {
				t.Fatalf("%s: strict and non-strict decodes differ", target.name)
			}
			for _, p := range problems {
				if p.Pos.IsZero() {
					t.Fatalf("%s: problem %v has no position", target.name, p)
				}
				if _, ok := d.Position(p.Path); !ok {
					t.Fatalf("%s: Position(%q) not found", target.name, p.Path)
				}
			}
		}
		if bytes.Contains(d.JSON(), []byte("dnsParams")) || bytes.Contains(d.JSON(), []byte(`\u`)) {
			continue
		}
		wantStrict, wantErr := kjson.UnmarshalStrict(d.JSON(), target.upstream(), kjson.DisallowUnknownFields, kjson.DisallowDuplicateFields)
		if errString(err) != errString(wantErr) {
			t.Fatalf("%s: error %v, upstream type gives %v", target.name, err, wantErr)
		}
		if len(problems) != len(wantStrict) {
			t.Fatalf("%s: %d problems, upstream type gives %d", target.name, len(problems), len(wantStrict))
		}
		for i := range problems {
			if problems[i].Error() != wantStrict[i].Error() {
				t.Fatalf("%s: problem %d is %v, upstream type gives %v", target.name, i, problems[i], wantStrict[i])
			}
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// checkAgainstYAMLv3 compares a one-document input with what yaml.v3
// decodes, converted to JSON by the rules in the package documentation.
// Inputs yaml.v3 rejects (duplicate keys, among others) or that hold values
// the oracle cannot express (timestamps) are skipped.
func checkAgainstYAMLv3(t *testing.T, data []byte, docs []*Document, splitErr error) {
	t.Helper()
	want, ok := yamlOracle(data)
	if !ok {
		return
	}
	if splitErr != nil {
		msg := splitErr.Error()
		if strings.Contains(msg, "nesting deeper") || strings.Contains(msg, "aliases expand") {
			return
		}
		t.Fatalf("yaml.v3 decodes the input, Split fails: %v", splitErr)
	}
	if len(docs) != 1 {
		t.Fatalf("yaml.v3 sees one document, Split %d", len(docs))
	}
	wantJSON, err := json.Marshal(want)
	if err != nil {
		return
	}
	if !reflect.DeepEqual(decodeNumbers(t, wantJSON), decodeNumbers(t, docs[0].JSON())) {
		t.Fatalf("converted JSON differs from yaml.v3:\n got %s\nwant %s", docs[0].JSON(), wantJSON)
	}
}

func decodeNumbers(t *testing.T, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("invalid JSON %s: %v", data, err)
	}
	return v
}

// yamlOracle decodes a stream holding exactly one non-null document with
// yaml.v3 and converts it to a JSON-shaped value.
func yamlOracle(data []byte) (v any, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	dec := yaml3.NewDecoder(bytes.NewReader(data))
	var vals []any
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, false
		}
		if v != nil {
			vals = append(vals, v)
		}
	}
	if len(vals) != 1 {
		return nil, false
	}
	return oracleValue(vals[0])
}

func oracleValue(v any) (any, bool) {
	switch x := v.(type) {
	case string:
		// yaml.v3 reads YAML 1.1 booleans (yes, on, y, …) as strings; we
		// read them as upstream does, and the oracle cannot tell a plain
		// `yes` from a quoted one.
		if yaml11Bool(x) {
			return nil, false
		}
		return x, true
	case nil, bool:
		return x, true
	case int:
		return json.Number(strconv.Itoa(x)), true
	case int64:
		return json.Number(strconv.FormatInt(x, 10)), true
	case uint64:
		return json.Number(strconv.FormatUint(x, 10)), true
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, false
		}
		b, _ := json.Marshal(x)
		return json.Number(b), true
	case time.Time:
		return nil, false
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			var ok bool
			if out[i], ok = oracleValue(e); !ok {
				return nil, false
			}
		}
		return out, true
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if yaml11Bool(k) {
				return nil, false
			}
			var ok bool
			if out[k], ok = oracleValue(e); !ok {
				return nil, false
			}
		}
		return out, true
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			ks, ok := oracleKey(k)
			if !ok {
				return nil, false
			}
			if _, dup := out[ks]; dup {
				return nil, false // two keys with one JSON spelling
			}
			if out[ks], ok = oracleValue(e); !ok {
				return nil, false
			}
		}
		return out, true
	}
	return nil, false
}

func oracleKey(k any) (string, bool) {
	switch x := k.(type) {
	case string:
		return x, !yaml11Bool(x)
	case bool:
		return strconv.FormatBool(x), true
	case int:
		return strconv.Itoa(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case uint64:
		return strconv.FormatUint(x, 10), true
	case float64:
		switch {
		case math.IsInf(x, 1):
			return ".inf", true
		case math.IsInf(x, -1):
			return "-.inf", true
		case math.IsNaN(x):
			return ".nan", true
		}
		return strconv.FormatFloat(x, 'g', -1, 32), true
	}
	return "", false
}

func yaml11Bool(s string) bool {
	switch s {
	case "y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "n", "N", "no", "No", "NO", "off", "Off", "OFF":
		return true
	}
	return false
}
