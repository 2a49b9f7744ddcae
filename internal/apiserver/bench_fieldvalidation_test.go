package apiserver

import (
	"net/http/httptest"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/dnsplane/dnsplane/internal/strictdecode"
)

// BenchmarkFieldValidation measures decoding a Deployment body and applying
// each fieldValidation directive, without storage, so the directives can be
// compared with each other (the KEP's question: what does Strict cost over
// Ignore). Bodies: upstream's KEP-2885 test Deployment (invJSON/invYAML, seven
// problems) and the
// same Deployment without problems.
func BenchmarkFieldValidation(b *testing.B) {
	res, _ := NewRegistry().Lookup(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"})
	clean := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"paused":true,"selector":{"matchLabels":{"app":"nginx"}},"template":{"metadata":{"labels":{"app":"nginx"}},"spec":{"containers":[{"name":"nginx","image":"nginx:latest","imagePullPolicy":"Always"}]}}}}`
	bodies := []struct {
		name   string
		body   []byte
		format strictdecode.Format
	}{
		{"json-clean", []byte(clean), strictdecode.JSON},
		{"json-invalid", []byte(invJSON("d")), strictdecode.JSON},
		{"yaml-invalid", []byte(invYAML("d")), strictdecode.YAML},
	}
	for _, body := range bodies {
		for _, fv := range []fieldValidation{fieldValidationIgnore, fieldValidationWarn, fieldValidationStrict} {
			b.Run(body.name+"/"+string(fv), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					d, err := decodeObject(res, body.body, body.format)
					if err != nil {
						b.Fatal(err)
					}
					_ = applyFieldValidation(httptest.NewRecorder(), res, fv, d)
				}
			})
		}
	}
}
