package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func testRoutes() Routes {
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	dnses := schema.GroupVersionResource{Group: "operator.dnsplane.io", Version: "v1", Resource: "dnses"}
	deny := func(_ context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: "denied " + req.Name}}
	}
	return Routes{
		Mutate: map[schema.GroupVersionResource]Reviewer{
			pods:  deny,
			dnses: func(context.Context, *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse { panic("boom") },
		},
		Validate: map[schema.GroupVersionResource]Reviewer{pods: nil, dnses: deny},
	}
}

func reviewBody(t *testing.T, res metav1.GroupVersionResource, sub string) []byte {
	t.Helper()
	b, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "u-42", Resource: res, SubResource: sub, Name: "x",
			Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: []byte(`{}`)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestHandler(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(Handler(testRoutes(), func() error { return errors.New("no certificate yet") }, nil))
	t.Cleanup(srv.Close)
	pods := metav1.GroupVersionResource{Version: "v1", Resource: "pods"}
	dnses := metav1.GroupVersionResource{Group: "operator.dnsplane.io", Version: "v1", Resource: "dnses"}
	for _, tc := range []struct {
		name        string
		method      string
		path        string
		contentType string
		body        []byte
		wantCode    int
		wantAllowed *bool // nil: no AdmissionReview expected
		wantMessage string
	}{
		{"mutate dispatches by resource", "POST", "/mutate", "application/json", reviewBody(t, pods, ""), 200, ptr(false), "denied x"},
		{"validate dispatches by resource", "POST", "/validate", "application/json", reviewBody(t, dnses, ""), 200, ptr(false), "denied x"},
		{"nil reviewer allows", "POST", "/validate", "application/json", reviewBody(t, pods, ""), 200, ptr(true), ""},
		{"unrouted resource allowed", "POST", "/mutate", "application/json",
			reviewBody(t, metav1.GroupVersionResource{Version: "v1", Resource: "configmaps"}, ""), 200, ptr(true), ""},
		{"subresource allowed", "POST", "/mutate", "application/json", reviewBody(t, pods, "status"), 200, ptr(true), ""},
		{"panic refuses that request", "POST", "/mutate", "application/json", reviewBody(t, dnses, ""), 200, ptr(false), "boom"},
		{"charset parameter accepted", "POST", "/mutate", "application/json; charset=utf-8", reviewBody(t, pods, ""), 200, ptr(false), "denied x"},
		{"not JSON", "POST", "/mutate", "application/yaml", reviewBody(t, pods, ""), http.StatusUnsupportedMediaType, nil, ""},
		{"not a review", "POST", "/mutate", "application/json", []byte(`{"apiVersion":"v1","kind":"Pod"}`), http.StatusBadRequest, nil, ""},
		{"v1beta1 review", "POST", "/mutate", "application/json", bytes.Replace(reviewBody(t, pods, ""), []byte("admission.k8s.io/v1"), []byte("admission.k8s.io/v1beta1"), 1), http.StatusBadRequest, nil, ""},
		{"over kube-apiserver's 3 MiB", "POST", "/mutate", "application/json", bytes.Repeat([]byte(" "), MaxRequestBytes+1), http.StatusRequestEntityTooLarge, nil, ""},
		{"GET /mutate", "GET", "/mutate", "", nil, http.StatusMethodNotAllowed, nil, ""},
		{"healthz", "GET", "/healthz", "", nil, 200, nil, ""},
		{"readyz without certificate", "GET", "/readyz", "", nil, http.StatusServiceUnavailable, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequestWithContext(t.Context(), tc.method, srv.URL+tc.path, bytes.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tc.wantCode {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.wantCode)
			}
			if tc.wantAllowed == nil {
				return
			}
			var out admissionv1.AdmissionReview
			if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
				t.Fatal(err)
			}
			if out.APIVersion != "admission.k8s.io/v1" || out.Kind != "AdmissionReview" || out.Response == nil || out.Response.UID != "u-42" {
				t.Fatalf("response review %+v: want admission.k8s.io/v1 AdmissionReview answering uid u-42", out)
			}
			if out.Response.Allowed != *tc.wantAllowed {
				t.Errorf("allowed = %v, want %v", out.Response.Allowed, *tc.wantAllowed)
			}
			if tc.wantMessage != "" && (out.Response.Result == nil || !strings.Contains(out.Response.Result.Message, tc.wantMessage)) {
				t.Errorf("result %+v, want a message with %q", out.Response.Result, tc.wantMessage)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
