package filters

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/dnsplane/dnsplane/internal/authn"
)

// blockingHandler holds every request until release is closed, counting
// those inside.
type blockingHandler struct {
	release chan struct{}
	mu      sync.Mutex
	inside  int
}

func (b *blockingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	b.inside++
	b.mu.Unlock()
	<-b.release
	InitialListDone(r.Context())
	w.WriteHeader(http.StatusOK)
}

func (b *blockingHandler) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.inside
}

func userRequest(path string, u authn.User) *http.Request {
	r := httptest.NewRequest(http.MethodGet, path, nil)
	return r.WithContext(authn.WithUser(r.Context(), u))
}

var (
	alice  = authn.User{Name: "alice", Groups: []string{"system:authenticated"}}
	bob    = authn.User{Name: "bob", Groups: []string{"system:authenticated"}}
	master = authn.User{Name: "admin", Groups: []string{"system:masters", "system:authenticated"}}
)

const (
	cmList  = "/api/v1/namespaces/team/configmaps"
	cmWatch = "/api/v1/namespaces/team/configmaps?watch=true&resourceVersion=5"
)

// TestUserLimits checks the per-user bounds of WithUserLimits: which
// request of a user beyond them is answered 429 with kube's Retry-After and
// text, and that other users and system:masters are not held by them.
func TestUserLimits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// held are sent first and stay in the handler (or its queue);
		// then probe is sent.
		held  []*http.Request
		probe *http.Request
		// want429: probe is refused; else it reaches the handler.
		want429 bool
	}{
		{"lists beyond the slots and the queue are refused",
			[]*http.Request{userRequest(cmList, alice), userRequest(cmList, alice), userRequest(cmList, alice)},
			userRequest(cmList, alice), true},
		{"another user's list is served",
			[]*http.Request{userRequest(cmList, alice), userRequest(cmList, alice), userRequest(cmList, alice)},
			userRequest(cmList, bob), false},
		{"system:masters is exempt",
			[]*http.Request{userRequest(cmList, master), userRequest(cmList, master), userRequest(cmList, master)},
			userRequest(cmList, master), false},
		{"watches beyond the cap are refused",
			[]*http.Request{userRequest(cmWatch, alice), userRequest(cmWatch, alice)},
			userRequest(cmWatch, alice), true},
		{"a watch from a revision takes no list slot",
			[]*http.Request{userRequest(cmList, alice), userRequest(cmList, alice)},
			userRequest(cmWatch, alice), false},
		{"a watch that lists first takes a list slot",
			[]*http.Request{userRequest(cmList, alice), userRequest(cmList, alice), userRequest(cmList, alice)},
			userRequest("/api/v1/namespaces/team/configmaps?watch=true", alice), true},
		{"gets are not limited",
			[]*http.Request{userRequest(cmList, alice), userRequest(cmList, alice), userRequest(cmList, alice)},
			userRequest(cmList+"/one", alice), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u, err := NewUserLimits(Limits{MaxListsPerUser: 2, UserQueueLength: 1, UserQueueWait: time.Minute, MaxWatchesPerUser: 2}, prometheus.NewRegistry())
			if err != nil {
				t.Fatal(err)
			}
			next := &blockingHandler{release: make(chan struct{})}
			h := WithUserLimits(next, u, testResolver)
			var wg sync.WaitGroup
			defer wg.Wait()
			defer close(next.release)
			for _, r := range tc.held {
				wg.Add(1)
				go func() {
					defer wg.Done()
					h.ServeHTTP(httptest.NewRecorder(), r)
				}()
			}
			// The held requests are in: in the handler, or the one
			// beyond the slots waiting in the queue.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
				u.mu.Lock()
				defer u.mu.Unlock()
				waiting := 0
				for _, st := range u.users {
					waiting += st.waiting
				}
				return next.count()+waiting == len(tc.held), nil
			}); err != nil {
				t.Fatalf("held requests did not arrive: %v", err)
			}
			before := next.count()
			rec := httptest.NewRecorder()
			done := make(chan struct{})
			go func() {
				defer close(done)
				h.ServeHTTP(rec, tc.probe)
			}()
			if tc.want429 {
				<-done
				if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "1" ||
					strings.TrimSpace(rec.Body.String()) != TooManyRequestsMessage {
					t.Fatalf("got %d Retry-After=%q %q, want 429 Retry-After=1 %q", rec.Code, rec.Header().Get("Retry-After"), rec.Body.String(), TooManyRequestsMessage)
				}
				return
			}
			if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
				return next.count() == before+1, nil
			}); err != nil {
				t.Fatalf("the request did not reach the handler: %v", err)
			}
		})
	}
}

// TestUserLimitsQueueTimesOut: a list that waits longer than the queue's
// wait gets the 429, and gives its place back.
func TestUserLimitsQueueTimesOut(t *testing.T) {
	t.Parallel()
	u, err := NewUserLimits(Limits{MaxListsPerUser: 1, UserQueueLength: 1, UserQueueWait: 50 * time.Millisecond}, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	next := &blockingHandler{release: make(chan struct{})}
	h := WithUserLimits(next, u, testResolver)
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(httptest.NewRecorder(), userRequest(cmList, alice))
	}()
	ctx := context.Background()
	if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return next.count() == 1, nil
	}); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, userRequest(cmList, alice))
	if rec.Code != http.StatusTooManyRequests {
		t.Fatalf("queued list got %d, want 429", rec.Code)
	}
	close(next.release)
	<-done
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.users) != 0 {
		t.Fatalf("users still tracked after every request ended: %v", u.users)
	}
}
