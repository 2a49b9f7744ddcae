package strictdecode

import "testing"

const positionJSON = `{
  "apiVersion": "v1",
  "kind": "Pod",
  "metadata": {"name": "p", "labels": {"app.kubernetes.io/name": "x", "0": "zero"}},
  "spec": {
    "dnsPolicy": "None",
    "dnsConfig": {
      "searches": [
        "a.example",
        "b.example"
      ]
    },
    "containers": [{"name": "c", "ports": [[1], [2, 3]]}]
  }
}`

const positionYAML = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
  labels:
    app.kubernetes.io/name: x
    "0": zero
spec:
  template:
    spec:
      dnsPolicy: Custom
      dnsConfig:
        searches:
        - a.example
        - b.example
      dnsParams:
        custom:
          search: ["$(NAMESPACE).svc", $(HOST)]
`

func TestPosition(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, path string
		want           Position
		ok             bool
	}{
		{"JSON list item", positionJSON, "spec.dnsConfig.searches[0]", Position{9, 9}, true},
		{"JSON second item", positionJSON, "spec.dnsConfig.searches[1]", Position{10, 9}, true},
		{"JSON key", positionJSON, "spec.dnsPolicy", Position{6, 5}, true},
		{"JSON object member", positionJSON, "spec.dnsConfig", Position{7, 5}, true},
		{"JSON dotted key, bracket form", positionJSON, "metadata.labels[app.kubernetes.io/name]", Position{4, 40}, true},
		{"JSON dotted key, dot form", positionJSON, "metadata.labels.app.kubernetes.io/name", Position{4, 40}, true},
		{"JSON numeric key in brackets", positionJSON, "metadata.labels[0]", Position{4, 71}, true},
		{"JSON nested arrays", positionJSON, "spec.containers[0].ports[1][1]", Position{13, 53}, true},
		{"JSON absent", positionJSON, "spec.dnsConfig.searches[2]", Position{}, false},
		{"JSON absent key", positionJSON, "spec.nodeName", Position{}, false},
		{"JSON whole document", positionJSON, "", Position{1, 1}, true},
		{"YAML validation path", positionYAML, "spec.template.spec.dnsPolicy", Position{11, 7}, true},
		{"YAML list item", positionYAML, "spec.template.spec.dnsConfig.searches[0]", Position{14, 11}, true},
		{"YAML flow item", positionYAML, "spec.template.spec.dnsParams.custom.search[1]", Position{18, 40}, true},
		{"YAML dotted key, bracket form", positionYAML, "metadata.labels[app.kubernetes.io/name]", Position{6, 5}, true},
		{"YAML dotted key, dot form", positionYAML, "metadata.labels.app.kubernetes.io/name", Position{6, 5}, true},
		{"YAML numeric key", positionYAML, "metadata.labels[0]", Position{7, 5}, true},
		{"YAML absent", positionYAML, "spec.template.spec.dnsConfig.options", Position{}, false},
		{"malformed path", positionYAML, "spec[", Position{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc := splitOne(t, tt.in)
			got, ok := doc.Position(tt.path)
			if got != tt.want || ok != tt.ok {
				t.Errorf("Position(%q) = %v, %v; want %v, %v", tt.path, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// With duplicate keys, Position gives the last occurrence: the value the
// decoded object holds and that validation complains about.
func TestPositionDuplicateIsLast(t *testing.T) {
	t.Parallel()
	doc := splitOne(t, "spec:\n  dnsPolicy: A\n  dnsPolicy: B\n")
	if got, _ := doc.Position("spec.dnsPolicy"); got != (Position{3, 3}) {
		t.Errorf("got %v, want line 3 column 3", got)
	}
}

// A document after others keeps positions relative to the whole input.
func TestPositionLaterDocument(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     Position
	}{
		{"YAML", "a: 1\n---\n# c\nspec:\n  x: 1\n", Position{5, 3}},
		{"JSON", "{\"a\": 1}\n\n{\"spec\":\n  {\"x\": 1}}", Position{4, 4}},
		{"JSON on the same line", `{"a": 1} {"spec": {"x": 1}}`, Position{1, 20}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			docs, err := Split([]byte(tt.in))
			if err != nil || len(docs) != 2 {
				t.Fatalf("Split = %d docs, %v", len(docs), err)
			}
			if got, ok := docs[1].Position("spec.x"); !ok || got != tt.want {
				t.Errorf("Position = %v, %v; want %v", got, ok, tt.want)
			}
		})
	}
}

// Position and Decode may be used from several goroutines.
func TestDocumentConcurrentUse(t *testing.T) {
	t.Parallel()
	doc := splitOne(t, invYAML)
	done := make(chan struct{})
	for i := 0; i < 4; i++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for j := 0; j < 20; j++ {
				if _, ok := doc.Position("spec.template.spec.containers[0].image"); !ok {
					t.Error("position not found")
				}
				if _, err := doc.Decode(newDeployment()); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	for i := 0; i < 4; i++ {
		<-done
	}
}
