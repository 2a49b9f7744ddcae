package apiserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dnsplane/dnsplane/internal/apiserver/store"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// rvServer serves a second Server over the shared server's etcd on a
// loopback port, without authentication, with a short resourceVersion wait
// so the tests of the 504 do not each take kube's 3 s.
func rvServer(t *testing.T, ts *testServer, wait time.Duration) string {
	t.Helper()
	srv, err := New(Config{Store: ts.run.Server.storage, ResourceVersionWait: wait})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return hs.URL
}

// currentRevision is etcd's revision now, as the next write will exceed it.
func currentRevision(t *testing.T, ts *testServer) int64 {
	t.Helper()
	rev, err := ts.run.Server.storage.CurrentRevision(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

type rawResponse struct {
	code       int
	status     metav1.Status
	retryAfter string
	took       time.Duration
}

func rawGet(t *testing.T, url string) rawResponse {
	t.Helper()
	start := time.Now()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := rawResponse{code: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
	if resp.StatusCode != http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&out.status); err != nil {
			t.Fatalf("%s: %d without a Status: %v", url, resp.StatusCode, err)
		}
	} else {
		_, _ = io.Copy(io.Discard, resp.Body)
	}
	out.took = time.Since(start)
	return out
}

// checkTooLarge checks kube-apiserver's exact 504 for resourceVersion rv
// (the current revision in the message is whatever etcd had, below rv).
func checkTooLarge(t *testing.T, got rawResponse, rv int64) {
	t.Helper()
	st := got.status
	prefix := fmt.Sprintf("Timeout: Too large resource version: %d, current: ", rv)
	current, err := strconv.ParseInt(strings.TrimPrefix(st.Message, prefix), 10, 64)
	if got.code != 504 || st.Code != 504 || st.Reason != metav1.StatusReasonTimeout || st.Status != metav1.StatusFailure ||
		st.Kind != "Status" || !strings.HasPrefix(st.Message, prefix) || err != nil || current >= rv {
		t.Errorf("got %d %+v, want 504 Timeout %q<current>", got.code, st, prefix)
	}
	want := metav1.StatusDetails{RetryAfterSeconds: 1, Causes: []metav1.StatusCause{{
		Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}}
	if st.Details == nil || fmt.Sprint(*st.Details) != fmt.Sprint(want) {
		t.Errorf("details %+v, want %+v", st.Details, want)
	}
	if got.retryAfter != "1" {
		t.Errorf("Retry-After %q, want 1", got.retryAfter)
	}
}

// TestResourceVersionTooLargeDefaultWait checks the default wait is kube's
// 3 s. Before, a list at a future resourceVersion answered 200 at once with
// an older list than the client asked for.
func TestResourceVersionTooLargeDefaultWait(t *testing.T) {
	ts := sharedServer(t)
	rv := currentRevision(t, ts) + 1000
	client, err := rest.HTTPClientFor(ts.config)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	resp, err := client.Get(ts.run.URL + "/api/v1/namespaces/default/configmaps?resourceVersion=" + strconv.FormatInt(rv, 10))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got := rawResponse{code: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), took: time.Since(start)}
	if err := json.NewDecoder(resp.Body).Decode(&got.status); err != nil {
		t.Fatal(err)
	}
	checkTooLarge(t, got, rv)
	if got.took < defaultResourceVersionWait || got.took > defaultResourceVersionWait+5*time.Second {
		t.Errorf("answered after %v, want about %v", got.took, defaultResourceVersionWait)
	}
}

// TestResourceVersionParameter covers the resourceVersion of get, list and
// watch. Before: a get ignored it entirely (?resourceVersion=abc answered
// 200), a future one was answered at once from an older revision (get, list)
// or opened a watch that stayed silent, and Exact at a future revision was a
// 500 naming etcd keys.
func TestResourceVersionParameter(t *testing.T) {
	ts := sharedServer(t)
	ns := newNamespace(t, ts.client)
	if _, err := ts.client.CoreV1().ConfigMaps(ns).Create(context.Background(),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const wait = 300 * time.Millisecond
	base := rvServer(t, ts, wait) + "/api/v1/namespaces/" + ns + "/configmaps"
	future := currentRevision(t, ts) + 1000
	f := strconv.FormatInt(future, 10)
	invalid := func(v, why string) string {
		return fmt.Sprintf(`invalid resource version: resourceVersion: Invalid value: %q: %s`, v, why)
	}
	tests := []struct {
		name, url string
		code      int
		msg       string
	}{
		{"get abc", base + "/cm?resourceVersion=abc", 400, invalid("abc", `strconv.ParseUint: parsing "abc": invalid syntax`)},
		{"get of a missing object abc", base + "/nope?resourceVersion=abc", 400, invalid("abc", `strconv.ParseUint: parsing "abc": invalid syntax`)},
		{"list abc", base + "?resourceVersion=abc", 400, invalid("abc", `strconv.ParseUint: parsing "abc": invalid syntax`)},
		{"watch abc", base + "?watch=true&resourceVersion=abc", 400, invalid("abc", `strconv.ParseUint: parsing "abc": invalid syntax`)},
		{"list negative", base + "?resourceVersion=-1", 400, invalid("-1", `strconv.ParseUint: parsing "-1": invalid syntax`)},
		{"list beyond int64", base + "?resourceVersion=9223372036854775808", 400,
			invalid("9223372036854775808", "larger than any etcd revision (9223372036854775807)")},
		{"get 0", base + "/cm?resourceVersion=0", 200, ""},
		{"list 0", base + "?resourceVersion=0", 200, ""},
		{"get future", base + "/cm?resourceVersion=" + f, 504, ""},
		{"get of a missing object future", base + "/nope?resourceVersion=" + f, 504, ""},
		{"list future", base + "?resourceVersion=" + f, 504, ""},
		{"list future NotOlderThan", base + "?resourceVersionMatch=NotOlderThan&resourceVersion=" + f, 504, ""},
		{"list future Exact", base + "?resourceVersionMatch=Exact&resourceVersion=" + f, 504, ""},
		{"watch future", base + "?watch=true&timeoutSeconds=10&resourceVersion=" + f, 504, ""},
		{"watch-list future", base + "?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=10&resourceVersion=" + f, 504, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := rawGet(t, tt.url)
			switch tt.code {
			case 504:
				checkTooLarge(t, got, future)
				if got.took < wait {
					t.Errorf("answered after %v, before the %v wait", got.took, wait)
				}
			case 400:
				if got.code != 400 || got.status.Reason != metav1.StatusReasonBadRequest || got.status.Message != tt.msg {
					t.Errorf("got %d %+v\nwant 400 %q", got.code, got.status, tt.msg)
				}
			default:
				if got.code != tt.code {
					t.Errorf("got %d %+v, want %d", got.code, got.status, tt.code)
				}
			}
		})
	}
}

// watchLine is one event of a raw watch stream.
type watchLine struct {
	Type   string
	Object struct {
		Metadata struct{ Name, ResourceVersion string }
	}
}

// TestResourceVersionAppearsWithinWait starts a get, a list and a watch at
// the revision the next write will create, then writes: all three wait for
// it and succeed, and the watch delivers every event after that revision and
// none before (before, it streamed at once and relied on etcd to hold back).
func TestResourceVersionAppearsWithinWait(t *testing.T) {
	ts := sharedServer(t)
	ns := newNamespace(t, ts.client)
	base := rvServer(t, ts, 20*time.Second) + "/api/v1/namespaces/" + ns + "/configmaps"
	rv := currentRevision(t, ts) + 1
	q := "?resourceVersion=" + strconv.FormatInt(rv, 10)

	type result struct {
		what string
		code int
		err  error
	}
	results := make(chan result, 2)
	for _, what := range []string{"list", "get default/kubernetes"} {
		url := base + q
		if what != "list" {
			url = strings.Replace(base, "/namespaces/"+ns+"/configmaps", "/namespaces/default/services/kubernetes", 1) + q
		}
		go func() {
			resp, err := http.Get(url)
			if err != nil {
				results <- result{what: what, err: err}
				return
			}
			resp.Body.Close()
			results <- result{what: what, code: resp.StatusCode}
		}()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+q+"&watch=true&timeoutSeconds=15", nil)
	watchResp := make(chan *http.Response, 1)
	watchErr := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			watchErr <- err
			return
		}
		watchResp <- resp
	}()

	// Nothing answers before the revision exists.
	select {
	case r := <-results:
		t.Fatalf("%s answered %d before resource version %d existed", r.what, r.code, rv)
	case resp := <-watchResp:
		resp.Body.Close()
		t.Fatalf("watch answered %d before resource version %d existed", resp.StatusCode, rv)
	case err := <-watchErr:
		t.Fatal(err)
	case <-time.After(300 * time.Millisecond):
	}

	// Write three objects; the first creates rv unless another write got
	// there first. Every write after rv must reach the watch, in order.
	var want []string
	for _, name := range []string{"a", "b", "c"} {
		cm, err := ts.client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := strconv.ParseInt(cm.ResourceVersion, 10, 64); got > rv {
			want = append(want, "ADDED "+name+" "+cm.ResourceVersion)
		}
	}
	for range 2 {
		select {
		case r := <-results:
			if r.err != nil || r.code != 200 {
				t.Errorf("%s: %d %v, want 200", r.what, r.code, r.err)
			}
		case <-ctx.Done():
			t.Fatal("get/list did not answer")
		}
	}
	var resp *http.Response
	select {
	case resp = <-watchResp:
	case err := <-watchErr:
		t.Fatal(err)
	case <-ctx.Done():
		t.Fatal("watch did not answer")
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("watch: %d", resp.StatusCode)
	}
	var got []string
	sc := bufio.NewScanner(resp.Body)
	for len(got) < len(want) && sc.Scan() {
		var ev watchLine
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("event %q: %v", sc.Text(), err)
		}
		got = append(got, ev.Type+" "+ev.Object.Metadata.Name+" "+ev.Object.Metadata.ResourceVersion)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("watch from %d delivered\n%s\nwant\n%s", rv, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestWaitForRevisionHonoursContext checks a client that goes away stops the
// wait at once rather than holding the handler for the whole wait.
func TestWaitForRevisionHonoursContext(t *testing.T) {
	ts := sharedServer(t)
	srv, err := New(Config{Store: ts.run.Server.storage, ResourceVersionWait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		rv   int64
		want func(error) bool
	}{
		{"no resource version", 0, func(err error) bool { return err == nil }},
		{"reached", currentRevision(t, ts), func(err error) bool { return err == nil }},
		{"future, client gone", currentRevision(t, ts) + 1000, func(err error) bool { return errors.Is(err, context.DeadlineExceeded) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			start := time.Now()
			err := srv.waitForRevision(ctx, tt.rv)
			if !tt.want(err) || time.Since(start) > 5*time.Second {
				t.Errorf("err %v after %v", err, time.Since(start))
			}
			if err != nil {
				cms, _ := srv.reg.Lookup(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
				if st := store.Error(&cms.Resource, "", err); !apierrors.IsTimeout(st) {
					t.Errorf("as an API error: %v", st)
				}
			}
		})
	}
}
