package filters

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/dnsplane/dnsplane/internal/authn"
)

// UserLimits are per-user bounds on lists and watches.
//
// kube-apiserver bounds what one user can make it hold with API Priority
// and Fairness (KEP-1040): requests are sorted into flows by user, each
// priority level has a number of seats, flows share them fairly, and a
// request that finds no seat waits in a bounded queue (50), for at most a
// quarter of the request timeout (15s), then gets 429 "Too many requests,
// please try again later.". k8s.io/apiserver's filter cannot be wired in
// here as it is: it needs the FlowSchema and PriorityLevelConfiguration
// objects served and watched through a client-go informer of this server,
// its own requestinfo resolver and its width estimator, which read the
// list's size from its watch cache (we have none for lists). What it
// guarantees for the case issue 29 probed — one user with many large
// lists or many watches — is kept by a simpler equivalent:
//
//   - at most MaxListsPerUser lists of one user are served at once (a
//     watch's initial list counts until its initial events are sent);
//     more wait in that user's queue of UserQueueLength for up to
//     UserQueueWait, then get APF's 429 with Retry-After, which client-go
//     retries on its own;
//   - at most MaxWatchesPerUser watches of one user are open at once;
//   - users in system:masters are exempt, as APF's "exempt" FlowSchema
//     exempts them, so an administrator can always get in;
//   - the total stays bounded by --max-requests-inflight (maxinflight.go).
//
// Because the API server streams lists a page at a time, what a
// served list holds is a page, not the collection; the per-user bound is
// what keeps one user from taking every in-flight slot and the CPU of
// encoding, as APF's fairness does.
type UserLimits struct {
	maxLists, queueLength, maxWatches int
	wait                              time.Duration
	rejected                          *prometheus.CounterVec

	mu    sync.Mutex
	users map[string]*userState
}

// userState is what one user holds; it is dropped when refs is 0, so the
// map holds only the users with requests in flight.
type userState struct {
	lists   chan struct{} // one token per list being served
	waiting int
	watches int
	refs    int
}

// Reasons a request is rejected, as the rejected counter labels them
// (APF's reasons, plus the watch limit).
const (
	rejectQueueFull  = "queue-full"
	rejectTimeOut    = "time-out"
	rejectWatchLimit = "watch-limit"
)

// NewUserLimits returns the per-user bounds of l (its MaxListsPerUser,
// UserQueueLength, UserQueueWait and MaxWatchesPerUser, 0 meaning their
// defaults) and registers dnsplane_apiserver_user_rejected_requests_total
// with reg. One server has one, shared by every handler chain it builds.
func NewUserLimits(l Limits, reg prometheus.Registerer) (*UserLimits, error) {
	u := &UserLimits{
		maxLists:    l.MaxListsPerUser,
		queueLength: l.UserQueueLength,
		maxWatches:  l.MaxWatchesPerUser,
		wait:        l.UserQueueWait,
		users:       map[string]*userState{},
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dnsplane_apiserver_user_rejected_requests_total",
			Help: "Lists and watches answered 429 by the per-user limits, by kind (list, watch) and reason (queue-full, time-out, watch-limit).",
		}, []string{"kind", "reason"}),
	}
	if u.maxLists == 0 {
		u.maxLists = DefaultMaxListsPerUser
	}
	if u.queueLength <= 0 {
		u.queueLength = DefaultUserQueueLength
	}
	if u.wait <= 0 {
		u.wait = DefaultUserQueueWait
	}
	if u.maxWatches == 0 {
		u.maxWatches = DefaultMaxWatchesPerUser
	}
	if err := reg.Register(u.rejected); err != nil {
		return nil, fmt.Errorf("registering per-user limit metrics: %w", err)
	}
	return u, nil
}

// Users is how many users have lists or watches in flight: 0 once every
// one has ended and given its slots back.
func (u *UserLimits) Users() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.users)
}

// acquire takes a reference on name's state.
func (u *UserLimits) acquire(name string) *userState {
	u.mu.Lock()
	defer u.mu.Unlock()
	st := u.users[name]
	if st == nil {
		st = &userState{}
		if u.maxLists > 0 {
			st.lists = make(chan struct{}, u.maxLists)
		}
		u.users[name] = st
	}
	st.refs++
	return st
}

func (u *UserLimits) release(name string, st *userState) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if st.refs--; st.refs == 0 {
		delete(u.users, name)
	}
}

// waitForList takes a list slot of st, waiting in the user's queue; the
// returned func gives it back. reason says why not.
func (u *UserLimits) waitForList(ctx context.Context, st *userState) (release func(), reason string) {
	if st.lists == nil {
		return func() {}, ""
	}
	free := func() { <-st.lists }
	select {
	case st.lists <- struct{}{}:
		return free, ""
	default:
	}
	u.mu.Lock()
	if st.waiting >= u.queueLength {
		u.mu.Unlock()
		return nil, rejectQueueFull
	}
	st.waiting++
	u.mu.Unlock()
	defer func() {
		u.mu.Lock()
		st.waiting--
		u.mu.Unlock()
	}()
	timer := time.NewTimer(u.wait)
	defer timer.Stop()
	select {
	case st.lists <- struct{}{}:
		return free, ""
	case <-timer.C:
		return nil, rejectTimeOut
	case <-ctx.Done():
		return nil, rejectTimeOut
	}
}

// openWatch counts a watch of st; false when the user has too many.
func (u *UserLimits) openWatch(st *userState) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.maxWatches > 0 && st.watches >= u.maxWatches {
		return false
	}
	st.watches++
	return true
}

func (u *UserLimits) closeWatch(st *userState) {
	u.mu.Lock()
	st.watches--
	u.mu.Unlock()
}

// initialListKey carries the release of a watch's list slot, which the
// watch handler calls once its initial events are sent.
type initialListKey struct{}

// InitialListDone gives back the list slot a watch holds for its initial
// events, if any: the watch handler calls it once they are sent, so that a
// watch costs a list slot only while it costs what a list does.
func InitialListDone(ctx context.Context) {
	if f, ok := ctx.Value(initialListKey{}).(func()); ok {
		f()
	}
}

// watchListsInitially reports whether a watch request starts with the
// current objects (no resourceVersion, "0", or sendInitialEvents=true),
// which costs what a list does.
func watchListsInitially(r *http.Request) bool {
	q := r.URL.Query()
	rv := q.Get("resourceVersion")
	return rv == "" || rv == "0" || isTrue(q.Get("sendInitialEvents"))
}

// WithUserLimits applies u to the lists and watches of authenticated users
// (authn.UserFrom the request's context, so it runs after authentication
// and impersonation and counts the user impersonation leaves).
func WithUserLimits(next http.Handler, u *UserLimits, resolver apirequest.RequestInfoResolver) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			next.ServeHTTP(w, r)
			return
		}
		user, ok := authn.UserFrom(r.Context())
		if !ok || slices.Contains(user.Groups, "system:masters") {
			next.ServeHTTP(w, r)
			return
		}
		info, ok := resourceInfo(resolver, r)
		if !ok || info.Subresource != "" || (info.Verb != "list" && info.Verb != "watch") {
			next.ServeHTTP(w, r)
			return
		}
		st := u.acquire(user.Name)
		defer u.release(user.Name, st)
		if info.Verb == "watch" {
			if !u.openWatch(st) {
				u.reject(w, "watch", rejectWatchLimit)
				return
			}
			defer u.closeWatch(st)
			if !watchListsInitially(r) {
				next.ServeHTTP(w, r)
				return
			}
		}
		free, reason := u.waitForList(r.Context(), st)
		if free == nil {
			u.reject(w, info.Verb, reason)
			return
		}
		once := sync.OnceFunc(free)
		defer once()
		if info.Verb == "watch" {
			r = r.WithContext(context.WithValue(r.Context(), initialListKey{}, once))
		}
		next.ServeHTTP(w, r)
	})
}

// reject answers as WithMaxInFlight and APF do: 429, Retry-After, kube's
// text.
func (u *UserLimits) reject(w http.ResponseWriter, kind, reason string) {
	u.rejected.WithLabelValues(kind, reason).Inc()
	tooManyRequests(w)
}
