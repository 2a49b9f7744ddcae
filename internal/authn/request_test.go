package authn

import (
	"errors"
	"net/http"
	"reflect"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
)

type fixedAuth struct {
	u   User
	ok  bool
	err error
}

func (f fixedAuth) Authenticate(*http.Request) (User, bool, error) { return f.u, f.ok, f.err }

// TestRequest: what an Authenticator decides is what k8s.io/apiserver's
// request authenticator answers, the user unchanged (no group added).
func TestRequest(t *testing.T) {
	t.Parallel()
	bad := errors.New("invalid bearer token")
	carol := User{Name: "carol", UID: "c-1", Groups: []string{"devs"}, Extra: map[string][]string{"scopes": {"view"}}}
	for _, tc := range []struct {
		name string
		a    fixedAuth
		want user.Info
		ok   bool
		err  error
	}{
		{"accepted", fixedAuth{u: carol, ok: true}, &user.DefaultInfo{Name: "carol", UID: "c-1", Groups: []string{"devs"}, Extra: map[string][]string{"scopes": {"view"}}}, true, nil},
		{"no credentials", fixedAuth{}, nil, false, nil},
		{"rejected", fixedAuth{err: bad}, nil, false, bad},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			resp, ok, err := Request(tc.a).AuthenticateRequest(&http.Request{Header: http.Header{}})
			if ok != tc.ok || !errors.Is(err, tc.err) {
				t.Fatalf("ok=%v err=%v, want ok=%v err=%v", ok, err, tc.ok, tc.err)
			}
			if tc.want == nil {
				if resp != nil {
					t.Errorf("response %+v, want none", resp)
				}
				return
			}
			if !reflect.DeepEqual(resp.User, tc.want) {
				t.Errorf("user %+v, want %+v", resp.User, tc.want)
			}
		})
	}
}
