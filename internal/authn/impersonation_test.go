package authn

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestImpersonation runs the real chain (token authentication, then
// impersonation) and records what the handler behind it sees. Before, the
// server had no impersonation: Impersonate-* headers were ignored, so the
// request ran as the caller, malformed combinations were accepted and the
// anonymous user could send them on public paths.
func TestImpersonation(t *testing.T) {
	tf, err := ParseTokenFile(strings.NewReader("tok,alice,uid-a,dev\n"))
	if err != nil {
		t.Fatal(err)
	}
	type seen struct {
		User    User
		Headers []string // Impersonate-* headers still on the request
	}
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, _ := UserFrom(r.Context())
		s := seen{User: u}
		for name := range r.Header {
			if isImpersonationHeader(name) {
				s.Headers = append(s.Headers, name)
			}
		}
		_ = json.NewEncoder(w).Encode(s)
	})
	h := middleware(tf, []string{"/healthz"}, Impersonation(AuthenticatedMayImpersonate, quietLogger(), next), quietLogger())

	alice := User{Name: "alice", UID: "uid-a", Groups: []string{"dev", GroupAuthenticated}}
	tests := []struct {
		name     string
		path     string
		token    string
		headers  [][2]string
		wantCode int
		wantUser User
		wantMsg  string
	}{
		{name: "no impersonation", token: "tok", wantCode: 200, wantUser: alice},
		{name: "user", token: "tok", headers: [][2]string{{"Impersonate-User", "bob"}}, wantCode: 200,
			wantUser: User{Name: "bob", Groups: []string{GroupAuthenticated}}},
		{name: "user, groups, uid and extras", token: "tok", headers: [][2]string{
			{"Impersonate-User", "bob"}, {"Impersonate-Group", "devs"}, {"Impersonate-Group", "ops"},
			{"Impersonate-Uid", "42"}, {"Impersonate-Extra-Scopes", "view"}, {"Impersonate-Extra-Scopes", "edit"},
			{"Impersonate-Extra-Acme.com%2fproject", "p1"}}, wantCode: 200,
			wantUser: User{Name: "bob", UID: "42", Groups: []string{"devs", "ops", GroupAuthenticated},
				Extra: map[string][]string{"scopes": {"view", "edit"}, "acme.com/project": {"p1"}}}},
		{name: "system:authenticated named is not added twice", token: "tok",
			headers: [][2]string{{"Impersonate-User", "bob"}, {"Impersonate-Group", GroupAuthenticated}}, wantCode: 200,
			wantUser: User{Name: "bob", Groups: []string{GroupAuthenticated}}},
		{name: "system:unauthenticated named keeps system:authenticated out", token: "tok",
			headers: [][2]string{{"Impersonate-User", "bob"}, {"Impersonate-Group", GroupUnauthenticated}}, wantCode: 200,
			wantUser: User{Name: "bob", Groups: []string{GroupUnauthenticated}}},
		{name: "anonymous impersonated", token: "tok", headers: [][2]string{{"Impersonate-User", UserAnonymous}}, wantCode: 200,
			wantUser: User{Name: UserAnonymous, Groups: []string{GroupUnauthenticated}}},
		{name: "service account gets its groups", token: "tok",
			headers: [][2]string{{"Impersonate-User", "system:serviceaccount:kube-system:dns"}}, wantCode: 200,
			wantUser: User{Name: "system:serviceaccount:kube-system:dns",
				Groups: []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", GroupAuthenticated}}},
		{name: "service account with groups named gets only those", token: "tok",
			headers: [][2]string{{"Impersonate-User", "system:serviceaccount:ns1:sa"}, {"Impersonate-Group", "g"}}, wantCode: 200,
			wantUser: User{Name: "system:serviceaccount:ns1:sa", Groups: []string{"g", GroupAuthenticated}}},
		{name: "malformed service account name is a user", token: "tok",
			headers: [][2]string{{"Impersonate-User", "system:serviceaccount:Bad_NS:sa"}}, wantCode: 200,
			wantUser: User{Name: "system:serviceaccount:Bad_NS:sa", Groups: []string{GroupAuthenticated}}},
		{name: "group without user", token: "tok", headers: [][2]string{{"Impersonate-Group", "admins"}}, wantCode: 400,
			wantMsg: `requested [groups "admins"] without impersonating a user: Impersonate-Group needs Impersonate-User`},
		{name: "uid without user", token: "tok", headers: [][2]string{{"Impersonate-Uid", "42"}}, wantCode: 400,
			wantMsg: `requested [uids "42"] without impersonating a user: Impersonate-Uid needs Impersonate-User`},
		{name: "extra without user", token: "tok", headers: [][2]string{{"Impersonate-Extra-Scopes", "view"}}, wantCode: 400,
			wantMsg: `requested [userextras scopes="view"] without impersonating a user: Impersonate-Extra-* needs Impersonate-User`},
		{name: "anonymous cannot impersonate", path: "/healthz", headers: [][2]string{{"Impersonate-User", "bob"}}, wantCode: 403,
			wantMsg: `users "bob" is forbidden: User "system:anonymous" cannot impersonate resource "users" in API group "" at the cluster scope`},
		{name: "anonymous cannot impersonate a service account", path: "/healthz",
			headers: [][2]string{{"Impersonate-User", "system:serviceaccount:ns1:sa"}}, wantCode: 403,
			wantMsg: `serviceaccounts "sa" is forbidden: User "system:anonymous" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "ns1"`},
		{name: "anonymous with a malformed combination", path: "/healthz", headers: [][2]string{{"Impersonate-Group", "g"}}, wantCode: 400,
			wantMsg: `requested [groups "g"] without impersonating a user: Impersonate-Group needs Impersonate-User`},
		{name: "anonymous off the public paths is still 401", headers: [][2]string{{"Impersonate-User", "bob"}}, wantCode: 401,
			wantMsg: "Unauthorized"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.path
			if path == "" {
				path = "/api/v1/pods"
			}
			r := httptest.NewRequest(http.MethodGet, path, nil)
			if tt.token != "" {
				r.Header.Set("Authorization", "Bearer "+tt.token)
			}
			for _, kv := range tt.headers {
				r.Header.Add(kv[0], kv[1])
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.wantCode {
				t.Fatalf("code %d, want %d; body %s", w.Code, tt.wantCode, w.Body)
			}
			if tt.wantCode != 200 {
				var st metav1.Status
				if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil || st.Kind != "Status" || int(st.Code) != tt.wantCode || st.Message != tt.wantMsg {
					t.Errorf("status %+v (%v)\nwant message %q", st, err, tt.wantMsg)
				}
				return
			}
			var got seen
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.User, tt.wantUser) {
				t.Errorf("user %#v\nwant %#v", got.User, tt.wantUser)
			}
			if len(got.Headers) != 0 {
				t.Errorf("impersonation headers reached the handler: %v", got.Headers)
			}
		})
	}
}

// TestImpersonationStatusesMatchKube checks the 403 and 400 bodies are the
// Statuses apimachinery builds.
func TestImpersonationStatusesMatchKube(t *testing.T) {
	for _, err := range []*apierrors.StatusError{apierrors.NewBadRequest("x"), apierrors.NewForbidden(ImpersonationRequest{Resource: "uids"}.groupResource(), "42", errors.New("no"))} {
		w := httptest.NewRecorder()
		WriteStatus(w, err)
		want := err.Status()
		want.Kind, want.APIVersion = "Status", "v1"
		b, _ := json.Marshal(want)
		if w.Body.String() != string(b)+"\n" || w.Code != int(want.Code) || w.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%d %q, want %d %q", w.Code, w.Body, want.Code, b)
		}
	}
}

func TestParseImpersonationOrder(t *testing.T) {
	h := http.Header{}
	h.Add("Impersonate-Uid", "7")
	h.Add("Impersonate-Extra-B", "2")
	h.Add("Impersonate-Extra-A", "1")
	h.Add("Impersonate-Group", "g")
	h.Add("Impersonate-User", "u")
	got, err := ParseImpersonation(h)
	if err != nil {
		t.Fatal(err)
	}
	want := []ImpersonationRequest{{Resource: "users", Name: "u"}, {Resource: "groups", Name: "g"},
		{Resource: "userextras", Name: "1", ExtraKey: "a"}, {Resource: "userextras", Name: "2", ExtraKey: "b"}, {Resource: "uids", Name: "7"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if got, err := ParseImpersonation(http.Header{"Accept": {"*/*"}}); err != nil || got != nil {
		t.Errorf("no impersonation: %+v %v", got, err)
	}
}
