package authn

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

// authFunc adapts a function to Authenticator for composing test cases.
type authFunc func(*http.Request) (User, bool, error)

func (f authFunc) Authenticate(r *http.Request) (User, bool, error) { return f(r) }

func TestUnion(t *testing.T) {
	errA, errB := errors.New("a rejected"), errors.New("b rejected")
	none := authFunc(func(*http.Request) (User, bool, error) { return User{}, false, nil })
	fails := func(err error) Authenticator {
		return authFunc(func(*http.Request) (User, bool, error) { return User{}, false, err })
	}
	tokens := func(csv string) *TokenFile {
		tf, err := ParseTokenFile(strings.NewReader(csv))
		if err != nil {
			t.Fatal(err)
		}
		return tf
	}
	first := tokens("tok,first,uid-1\n")
	second := tokens("tok,second,uid-2\nother,third,uid-3\n")

	tests := []struct {
		name     string
		auths    []Authenticator
		header   string
		want     User
		wantOK   bool
		wantErrs []error
	}{
		{name: "empty union has no opinion"},
		{name: "nil members are skipped", auths: []Authenticator{nil, first, nil}, header: "Bearer tok",
			want: User{Name: "first", UID: "uid-1"}, wantOK: true},
		{name: "first success wins", auths: []Authenticator{first, second}, header: "Bearer tok",
			want: User{Name: "first", UID: "uid-1"}, wantOK: true},
		{name: "order decides", auths: []Authenticator{second, first}, header: "Bearer tok",
			want: User{Name: "second", UID: "uid-2"}, wantOK: true},
		{name: "a rejection does not stop later authenticators", auths: []Authenticator{first, second}, header: "Bearer other",
			want: User{Name: "third", UID: "uid-3"}, wantOK: true},
		{name: "all without opinion", auths: []Authenticator{none, X509{}, first}},
		{name: "errors are collected when none succeeds", auths: []Authenticator{fails(errA), none, fails(errB)},
			wantErrs: []error{errA, errB}},
		{name: "unknown token everywhere", auths: []Authenticator{first, second}, header: "Bearer nope",
			wantErrs: []error{errInvalidBearer}},
		{name: "success after errors drops them", auths: []Authenticator{fails(errA), first}, header: "Bearer tok",
			want: User{Name: "first", UID: "uid-1"}, wantOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/api", nil)
			if tt.header != "" {
				r.Header.Set("Authorization", tt.header)
			}
			got, ok, err := Union(tt.auths...).Authenticate(r)
			if len(tt.wantErrs) == 0 && err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			for _, want := range tt.wantErrs {
				if !errors.Is(err, want) {
					t.Errorf("err = %v, want it to wrap %v", err, want)
				}
			}
			if ok != tt.wantOK || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got (%#v, %v), want (%#v, %v)", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
