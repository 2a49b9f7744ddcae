package strictdecode

import (
	"bytes"
	"encoding/json"
	"testing"

	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	dpappsv1 "github.com/dnsplane/dnsplane/api/apps/v1"
)

// The benchmarks decode a typical Deployment the way a strict request is
// decoded: split/convert, then a strict decode into the Go type. "peer" is
// the upstream path for comparison, in the same run:
//
//   - YAML peer: sigs.k8s.io/yaml YAMLToJSON + sigs.k8s.io/json
//     UnmarshalStrict (finds unknown fields; duplicates collapse silently).
//   - YAML peer-apiserver: what kube-apiserver does for a strict YAML
//     request, YAMLToJSONStrict (duplicates) on top of the peer.
//   - JSON peer: UnmarshalStrict on the body.
//
// Run: go test -run '^$' -bench . -benchmem ./internal/strictdecode/

// benchDecode is the body of the "ours" sub-benchmarks, not a helper: a
// failure should point at the b.Fatal that fired.
func benchDecode(b *testing.B, data []byte, format Format) { //nolint:thelper // benchmark body run by b.Run
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		docs, err := SplitFormat(data, format)
		if err != nil || len(docs) != 1 {
			b.Fatal(err)
		}
		var d dpappsv1.Deployment
		if problems, err := docs[0].Decode(&d); err != nil || len(problems) != 0 {
			b.Fatal(err, problems)
		}
	}
}

func BenchmarkDecodeYAML(b *testing.B) {
	data := []byte(typicalYAML)
	b.Run("ours", func(b *testing.B) { benchDecode(b, data, YAML) })
	b.Run("peer", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			js, err := yaml.YAMLToJSON(data)
			if err != nil {
				b.Fatal(err)
			}
			var d dpappsv1.Deployment
			if strict, err := kjson.UnmarshalStrict(js, &d, kjson.DisallowUnknownFields, kjson.DisallowDuplicateFields); err != nil || len(strict) != 0 {
				b.Fatal(err, strict)
			}
		}
	})
	b.Run("peer-apiserver", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := yaml.YAMLToJSONStrict(data); err != nil {
				b.Fatal(err)
			}
			js, err := yaml.YAMLToJSON(data)
			if err != nil {
				b.Fatal(err)
			}
			var d dpappsv1.Deployment
			if strict, err := kjson.UnmarshalStrict(js, &d, kjson.DisallowUnknownFields, kjson.DisallowDuplicateFields); err != nil || len(strict) != 0 {
				b.Fatal(err, strict)
			}
		}
	})
	// With problems: the error path, which also locates every problem.
	bad := []byte(invYAML)
	b.Run("ours-with-problems", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			docs, err := SplitFormat(bad, YAML)
			if err != nil {
				b.Fatal(err)
			}
			var d dpappsv1.Deployment
			if problems, err := docs[0].Decode(&d); err != nil || len(problems) != 7 {
				b.Fatal(err, problems)
			}
		}
	})
}

func BenchmarkDecodeJSON(b *testing.B) {
	compact, err := yaml.YAMLToJSON([]byte(typicalYAML))
	if err != nil {
		b.Fatal(err)
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, compact, "", "  "); err != nil {
		b.Fatal(err)
	}
	data := indented.Bytes()
	b.Run("ours", func(b *testing.B) { benchDecode(b, data, JSON) })
	b.Run("peer", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			var d dpappsv1.Deployment
			if strict, err := kjson.UnmarshalStrict(data, &d, kjson.DisallowUnknownFields, kjson.DisallowDuplicateFields); err != nil || len(strict) != 0 {
				b.Fatal(err, strict)
			}
		}
	})
	bad := []byte(invJSON)
	b.Run("ours-with-problems", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			docs, err := SplitFormat(bad, JSON)
			if err != nil {
				b.Fatal(err)
			}
			var d dpappsv1.Deployment
			if problems, err := docs[0].Decode(&d); err != nil || len(problems) != 7 {
				b.Fatal(err, problems)
			}
		}
	})
}
