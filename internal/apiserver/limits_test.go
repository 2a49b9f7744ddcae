package apiserver

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/dnsplane/dnsplane/internal/apiserver/filters"
	"github.com/dnsplane/dnsplane/internal/apiserver/store"
	"github.com/dnsplane/dnsplane/internal/storage"
)

// The limits themselves are internal/apiserver/filters' and tested there;
// these tests check the server's side of them: its errors at the request
// deadline, and a real server's answers.

func configMaps(t *testing.T) *Resource {
	t.Helper()
	res, ok := NewRegistry().Lookup(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	if !ok {
		t.Fatal("no configmaps resource")
	}
	return res
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

// TestRequestDeadlineHandlerErrors: whatever error the server's handlers
// write once the request's deadline has passed (a storage call cut off, a
// context error wrapped on its way up) reaches the client as kube's 504
// Timeout, through the deadline filter and the server's error mapping;
// errors before the deadline pass unchanged.
func TestRequestDeadlineHandlerErrors(t *testing.T) {
	const timeoutMessage = "Timeout: request did not complete within requested timeout - context deadline exceeded"
	log := slog.New(slog.DiscardHandler)
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
		{"storage error after the deadline", "/api/v1/namespaces/a/configmaps/x?timeout=20ms",
			waitThen(func(w http.ResponseWriter, r *http.Request) {
				writeError(w, log, store.Error(&configMaps(t).Resource, "x", r.Context().Err()))
			}), http.StatusGatewayTimeout, timeoutMessage},
		{"wrapped context error after the deadline", "/api/v1/namespaces/a/configmaps/x?timeout=20ms",
			waitThen(func(w http.ResponseWriter, r *http.Request) {
				writeError(w, log, fmt.Errorf("allocating a cluster IP: %w", r.Context().Err()))
			}), http.StatusGatewayTimeout, timeoutMessage},
		{"success after the deadline passes", "/api/v1/namespaces/a/configmaps?timeout=20ms",
			waitThen(func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, http.StatusOK, map[string]string{"kind": "ConfigMapList"})
			}), http.StatusOK, ""},
		{"error before the deadline passes", "/api/v1/namespaces/a/configmaps/x",
			func(w http.ResponseWriter, r *http.Request) {
				writeError(w, log, store.Error(&configMaps(t).Resource, "x", storage.ErrNotFound))
			}, http.StatusNotFound, `configmaps "x" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			filters.WithRequestDeadline(tt.handler, time.Minute, requestInfoResolver{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.target, nil))
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

// TestServerRequestTimeout sends requests that run out of time to a real
// server: client-go must see kube's 504 Timeout, whether the deadline hits
// an etcd call or a body that never arrives.
func TestServerRequestTimeout(t *testing.T) {
	ts := sharedServer(t)
	const want = "Timeout: request did not complete within requested timeout - context deadline exceeded"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// ?timeout= shorter than anything etcd can answer in.
	err := ts.client.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces/default/configmaps").
		Param("timeout", "1ns").Do(ctx).Error()
	if !apierrors.IsTimeout(err) || err.Error() != want {
		t.Errorf("list with timeout=1ns: %v, want a Timeout error %q", err, want)
	}

	// A body announced and never sent: the read deadline ends the wait.
	tlsConfig, err := rest.TLSConfigFor(ts.config)
	if err != nil {
		t.Fatal(err)
	}
	tlsConfig.NextProtos = []string{"http/1.1"}
	c, err := tls.Dial("tcp", strings.TrimPrefix(ts.run.URL, "https://"), tlsConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	start := time.Now()
	fmt.Fprintf(c, "POST /api/v1/namespaces/default/configmaps?timeout=300ms HTTP/1.1\r\nHost: localhost\r\n"+
		"Authorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{", ts.config.BearerToken)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the response to a stalled body: %v", err)
	}
	defer resp.Body.Close()
	var s metav1.Status
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusGatewayTimeout || s.Message != want || s.Reason != metav1.StatusReasonTimeout {
		t.Errorf("stalled body: %d %+v, want 504 %q", resp.StatusCode, s, want)
	}
	if waited := time.Since(start); waited > 10*time.Second {
		t.Errorf("the stalled body was answered after %v, want about 300ms", waited)
	}
}
