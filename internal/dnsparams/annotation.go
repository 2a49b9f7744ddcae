package dnsparams

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	kjson "sigs.k8s.io/json"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

// Annotation is the key of the annotation in which the API server mirrors a
// pod spec's dnsParams, on the metadata of the same template (of the Pod
// itself): upstream's controllers are compiled against k8s.io/api, which
// has no spec.dnsParams, but they copy a template's annotations into what
// they make from it and into their template hashes and revisions, so the
// annotation carries the field through them (docs/pod-dns.md, "dnsParams
// and controllers").
const Annotation = "pod.dnsplane.io/dns-params"

// MaxAnnotationBytes bounds an annotation value Decode parses: kube's limit
// of all of an object's annotations together, so no dnsParams the API
// server can store mirrors into a value Decode refuses.
const MaxAnnotationBytes = apimachineryvalidation.TotalAnnotationSizeLimitB

// ErrTooLong is the error of Decode for a value over MaxAnnotationBytes.
var ErrTooLong = fmt.Errorf("must have at most %d bytes", MaxAnnotationBytes)

// Encode is the annotation value of p: its JSON with the fields in the Go
// type's order and no whitespace, so equal dnsParams always give the same
// value and so the same template hash.
func Encode(p *dpcorev1.PodDNSParams) string {
	b, err := json.Marshal(p)
	if err != nil {
		// A struct of strings always marshals.
		panic(fmt.Sprintf("dnsparams: encoding %#v: %v", p, err))
	}
	return string(b)
}

// Decode parses an annotation value back into dnsParams. It accepts a JSON
// object of the dnsParams type only, as the API server decodes a strict
// request (sigs.k8s.io/json: field names case-sensitive, no unknown or
// repeated fields), and refuses values over MaxAnnotationBytes before
// parsing them. The error says what is wrong, for a field.Invalid.
func Decode(value string) (*dpcorev1.PodDNSParams, error) {
	if len(value) > MaxAnnotationBytes {
		return nil, ErrTooLong
	}
	data := bytes.TrimSpace([]byte(value))
	if len(data) == 0 || data[0] != '{' {
		return nil, errors.New("must be a JSON object of spec.dnsParams")
	}
	p := &dpcorev1.PodDNSParams{}
	strict, err := kjson.UnmarshalStrict(data, p, kjson.DisallowUnknownFields, kjson.DisallowDuplicateFields)
	if err != nil {
		return nil, fmt.Errorf("must be a JSON object of spec.dnsParams: %w", err)
	}
	if err := errors.Join(strict...); err != nil {
		return nil, fmt.Errorf("must be a JSON object of spec.dnsParams: %w", err)
	}
	return p, nil
}
