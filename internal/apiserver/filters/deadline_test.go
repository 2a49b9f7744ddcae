package filters

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestRequestTimeoutParameter(t *testing.T) {
	t.Parallel()
	const serverMax = time.Minute
	tests := []struct {
		query   string
		want    time.Duration
		wantErr string
	}{
		{"", serverMax, ""},
		{"limit=5", serverMax, ""},
		{"timeoutSeconds=5", serverMax, ""}, // a watch/list parameter, not ours
		{"timeout=10s", 10 * time.Second, ""},
		{"timeout=1m30s&limit=5", serverMax, ""}, // larger than the server's: the server's
		{"timeout=1m", serverMax, ""},
		{"timeout=0s", serverMax, ""}, // 0 = the server's maximum, as upstream
		{"timeout=-5s", serverMax, ""},
		{"timeout=", serverMax, ""},
		{"limit=1&timeout=250ms", 250 * time.Millisecond, ""},
		{"timeout=abc", 0, `invalid timeout specified in the request URL - time: invalid duration "abc"`},
		{"timeout=10", 0, `invalid timeout specified in the request URL - time: missing unit in duration "10"`},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(http.MethodGet, "/api/v1/configmaps?"+tt.query, nil)
		got, err := requestTimeout(r, serverMax)
		switch {
		case tt.wantErr != "":
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("%q: error %v, want %q", tt.query, err, tt.wantErr)
			}
		case err != nil:
			t.Errorf("%q: %v", tt.query, err)
		case got != tt.want:
			t.Errorf("%q: timeout %v, want %v", tt.query, got, tt.want)
		}
	}
}

// statusOf decodes a metav1.Status response.
func statusOf(t *testing.T, rec *httptest.ResponseRecorder) metav1.Status {
	t.Helper()
	var s metav1.Status
	if err := json.Unmarshal(rec.Body.Bytes(), &s); err != nil {
		t.Fatalf("decoding %q: %v", rec.Body.String(), err)
	}
	return s
}

func TestRequestDeadline(t *testing.T) {
	t.Parallel()
	const timeoutMessage = "Timeout: request did not complete within requested timeout - context deadline exceeded"
	// waitThen waits for the request's deadline, then answers with respond.
	waitThen := func(respond func(w http.ResponseWriter, r *http.Request)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if _, ok := r.Context().Deadline(); !ok {
				w.WriteHeader(http.StatusTeapot) // no deadline: test fails below
				return
			}
			<-r.Context().Done()
			respond(w, r)
		}
	}
	tests := []struct {
		name        string
		target      string
		handler     http.HandlerFunc
		wantCode    int
		wantMessage string
	}{
		// The API server's own errors at the deadline (a storage error,
		// a wrapped context error) are checked with its error mapping in
		// internal/apiserver (TestRequestDeadlineHandlerErrors).
		{"internal error after the deadline", "/api/v1/namespaces/a/configmaps/x?timeout=20ms",
			waitThen(func(w http.ResponseWriter, r *http.Request) {
				writeStatus(w, apierrors.NewInternalError(r.Context().Err()))
			}), http.StatusGatewayTimeout, timeoutMessage},
		{"any error after the deadline", "/api/v1/namespaces/a/configmaps?timeout=20ms",
			waitThen(func(w http.ResponseWriter, r *http.Request) {
				// What a body read cut off by the read deadline becomes.
				http.Error(w, "reading the request body: i/o timeout", http.StatusBadRequest)
			}), http.StatusGatewayTimeout, timeoutMessage},
		{"success after the deadline passes", "/api/v1/namespaces/a/configmaps?timeout=20ms",
			waitThen(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"kind":"ConfigMapList"}`))
			}), http.StatusOK, ""},
		{"error before the deadline passes", "/api/v1/namespaces/a/configmaps/x",
			func(w http.ResponseWriter, r *http.Request) {
				writeStatus(w, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "x"))
			}, http.StatusNotFound, `configmaps "x" not found`},
		{"invalid timeout", "/api/v1/namespaces/a/configmaps?timeout=abc",
			func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) },
			http.StatusBadRequest, `invalid timeout specified in the request URL - time: invalid duration "abc"`},
		{"watch has no deadline", "/api/v1/namespaces/a/configmaps?watch=true&timeout=1ms",
			func(w http.ResponseWriter, r *http.Request) {
				if _, ok := r.Context().Deadline(); ok {
					w.WriteHeader(http.StatusTeapot)
					return
				}
				w.WriteHeader(http.StatusOK)
			}, http.StatusOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			WithRequestDeadline(tt.handler, time.Minute, testResolver).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.target, nil))
			if rec.Code != tt.wantCode {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.wantCode, rec.Body.String())
			}
			if tt.wantMessage == "" {
				return
			}
			s := statusOf(t, rec)
			if s.Message != tt.wantMessage || s.Code != int32(tt.wantCode) || s.Kind != "Status" {
				t.Errorf("status %+v, want code %d and message %q", s, tt.wantCode, tt.wantMessage)
			}
			if tt.wantCode == http.StatusGatewayTimeout && s.Reason != metav1.StatusReasonTimeout {
				t.Errorf("reason %q, want Timeout", s.Reason)
			}
		})
	}
}

// TestRequestDeadlineDefault checks the server's maximum applies without a
// ?timeout=, and that 0 turns deadlines off.
func TestRequestDeadlineDefault(t *testing.T) {
	t.Parallel()
	var got time.Duration
	var ok bool
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var d time.Time
		d, ok = r.Context().Deadline()
		got = time.Until(d)
	})
	WithRequestDeadline(h, 45*time.Second, testResolver).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/api/v1/configmaps", nil))
	if !ok || got <= 40*time.Second || got > 45*time.Second {
		t.Errorf("deadline in %v (set: %v), want about 45s", got, ok)
	}
	WithRequestDeadline(h, 0, testResolver).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/api/v1/configmaps", nil))
	if ok {
		t.Errorf("a request timeout of 0 still set a deadline")
	}
}

func TestDeadlineWriterKeepsContext(t *testing.T) {
	t.Parallel()
	// The deadline is on the context the handler sees, derived from the
	// request's, so cancelling the request still reaches the handler.
	parent, cancel := context.WithCancel(context.Background())
	cancel()
	var err error
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { err = r.Context().Err() })
	WithRequestDeadline(h, time.Minute, testResolver).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/api/v1/configmaps", nil).WithContext(parent))
	if err != context.Canceled {
		t.Errorf("handler context error %v, want context.Canceled", err)
	}
}
