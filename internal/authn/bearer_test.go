package authn

import (
	"errors"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

func TestTokenFileAuthenticate(t *testing.T) {
	tf, err := ParseTokenFile(strings.NewReader("tok1,alice,uid-a,\"g1,g2\"\ntok2,bob,uid-b\n"))
	if err != nil {
		t.Fatal(err)
	}
	alice := User{Name: "alice", UID: "uid-a", Groups: []string{"g1", "g2"}}
	tests := []struct {
		name    string
		headers []string // Authorization values; none means no header
		want    User
		wantOK  bool
		wantErr error
	}{
		{name: "no header"},
		{name: "empty header", headers: []string{""}},
		{name: "Bearer", headers: []string{"Bearer tok1"}, want: alice, wantOK: true},
		{name: "lowercase scheme", headers: []string{"bearer tok1"}, want: alice, wantOK: true},
		{name: "uppercase scheme", headers: []string{"BEARER tok1"}, want: alice, wantOK: true},
		{name: "mixed-case scheme", headers: []string{"bEaReR tok1"}, want: alice, wantOK: true},
		{name: "surrounding whitespace is trimmed", headers: []string{"  Bearer tok1 \t"}, want: alice, wantOK: true},
		{name: "text after the token is ignored, as in kube", headers: []string{"Bearer tok1 trailing words"}, want: alice, wantOK: true},
		{name: "user without groups", headers: []string{"Bearer tok2"}, want: User{Name: "bob", UID: "uid-b"}, wantOK: true},
		{name: "first of several headers counts", headers: []string{"Bearer tok2", "Bearer tok1"}, want: User{Name: "bob", UID: "uid-b"}, wantOK: true},
		{name: "scheme only", headers: []string{"Bearer"}},
		{name: "scheme and space only", headers: []string{"Bearer "}},
		{name: "two spaces make an empty token, as in kube", headers: []string{"Bearer  tok1"}},
		{name: "tab is not a separator", headers: []string{"Bearer\ttok1"}},
		{name: "other scheme", headers: []string{"Basic dG9rMTo="}},
		{name: "scheme without a space", headers: []string{"Bearertok1"}},
		{name: "token with no scheme", headers: []string{"tok1"}},
		{name: "unknown token", headers: []string{"Bearer nope"}, wantErr: errInvalidBearer},
		{name: "prefix of a token", headers: []string{"Bearer tok"}, wantErr: errInvalidBearer},
		{name: "token with a suffix", headers: []string{"Bearer tok1x"}, wantErr: errInvalidBearer},
		{name: "token case matters", headers: []string{"Bearer TOK1"}, wantErr: errInvalidBearer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/api", nil)
			for _, h := range tt.headers {
				r.Header.Add("Authorization", h)
			}
			got, ok, err := tf.Authenticate(r)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if ok != tt.wantOK || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got (%#v, %v), want (%#v, %v)", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
