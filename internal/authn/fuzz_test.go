package authn

import (
	"encoding/csv"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"
)

func FuzzParseTokenFile(f *testing.F) {
	for _, seed := range []string{
		"tok1,alice,uid-a\n",
		`tok1,alice,uid-a,"system:masters,dev"` + "\n",
		"tok1,alice,uid-a,dev,extra\n\n\ntok2,bob,uid-b\r\n",
		"#tok,alice,uid\n# comment\n",
		",empty,token\ntok,a,b\ntok,c,d,e\n",
		`"to,k",alice,uid-a` + "\n" + `"multi` + "\n" + `line",u,uid` + "\n",
		"tok\"2,bob,uid-b\n",
		"a b,c,d\n\ttab ,e,f\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data string) {
		tf, err := ParseTokenFile(strings.NewReader(data))
		want, oracleErr := oracleTokens(data)
		if (err != nil) != (oracleErr != nil) {
			t.Fatalf("ParseTokenFile error %v, oracle error %v", err, oracleErr)
		}
		if err != nil {
			return
		}
		if got := tokensOf(tf); !reflect.DeepEqual(got, want) {
			t.Fatalf("tokens = %#v\nwant     %#v", got, want)
		}
		for token, u := range want {
			// Tokens that an Authorization header can carry must work through
			// it; the others are checked through the lookup alone.
			if strings.Contains(token, " ") || strings.TrimRightFunc(token, unicode.IsSpace) != token {
				continue
			}
			r := httptest.NewRequest("GET", "/", nil)
			r.Header["Authorization"] = []string{"Bearer " + token}
			got, ok, err := tf.Authenticate(r)
			if err != nil || !ok || !reflect.DeepEqual(got, u) {
				t.Fatalf("token %q authenticates as (%#v, %v, %v), want %#v", token, got, ok, err, u)
			}
		}
	})
}

// oracleTokens states the token file rules independently of the parser:
// records of at least three columns, empty tokens skipped, the last record
// for a token wins, groups split on commas with empty names dropped.
func oracleTokens(data string) (map[string]User, error) {
	r := csv.NewReader(strings.NewReader(data))
	r.FieldsPerRecord = -1
	out := map[string]User{}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(rec) < 3 {
			return nil, errors.New("short record")
		}
		if rec[0] == "" {
			continue
		}
		u := User{Name: rec[1], UID: rec[2]}
		if len(rec) > 3 {
			for _, g := range strings.Split(rec[3], ",") {
				if g != "" {
					u.Groups = append(u.Groups, g)
				}
			}
		}
		out[rec[0]] = u
	}
}

func FuzzBearer(f *testing.F) {
	for _, seed := range []string{
		"", "Bearer tok1", "bearer tok1", "BEARER tok1", "Bearer  tok1", "Bearer tok1 more",
		"Bearer", "Bearer ", " Bearer tok2 ", "Bearer\ttok1", "Basic tok1", "Bearer tok", "Bearer tok1\x00",
	} {
		f.Add(seed)
	}
	tf, err := ParseTokenFile(strings.NewReader("tok1,alice,uid-a,\"g1,g2\"\ntok2,bob,uid-b\n"))
	if err != nil {
		f.Fatal(err)
	}
	known := map[string]User{
		"tok1": {Name: "alice", UID: "uid-a", Groups: []string{"g1", "g2"}},
		"tok2": {Name: "bob", UID: "uid-b"},
	}
	f.Fuzz(func(t *testing.T, header string) {
		r := httptest.NewRequest("GET", "/", nil)
		// Set directly: the fuzzer must reach values net/http would refuse
		// to send but a hand-written client or proxy might still deliver.
		r.Header["Authorization"] = []string{header}
		got, ok, err := tf.Authenticate(r)

		// The rule, stated once more: trimmed value, "bearer" in any case,
		// one space, then the token up to the next space.
		scheme, rest, found := strings.Cut(strings.TrimSpace(header), " ")
		token, _, _ := strings.Cut(rest, " ")
		switch u, isKnown := known[token]; {
		case !found || !strings.EqualFold(scheme, "bearer") || token == "":
			if ok || err != nil {
				t.Fatalf("%q: got (%#v, %v, %v), want no credentials", header, got, ok, err)
			}
		case isKnown:
			if !ok || err != nil || !reflect.DeepEqual(got, u) {
				t.Fatalf("%q: got (%#v, %v, %v), want %#v", header, got, ok, err, u)
			}
		default:
			if ok || !errors.Is(err, errInvalidBearer) {
				t.Fatalf("%q: got (%#v, %v, %v), want invalid bearer token", header, got, ok, err)
			}
		}
	})
}

// FuzzImpersonation feeds arbitrary Impersonate-* headers through the parser
// and the user it builds: no panic, the error exactly when something but a
// user is asked for, one request per header value, and an impersonated user
// that always has a name and one of the two catch-all groups.
func FuzzImpersonation(f *testing.F) {
	f.Add("bob", "devs", "ops", "Scopes", "view", "42")
	f.Add("system:serviceaccount:kube-system:dns", "", "", "", "", "")
	f.Add("system:serviceaccount:a:b:c", "system:unauthenticated", "", "acme.com%2Fproject", "p1", "")
	f.Add("", "admins", "", "", "", "")
	f.Add("", "", "", "%zz", "v", "")
	f.Add("system:anonymous", "", "", "", "", "")
	f.Add("", "", "", "", "", "7")
	f.Fuzz(func(t *testing.T, user, group1, group2, extraKey, extraValue, uid string) {
		h := http.Header{}
		values := 0
		set := func(name, v string) {
			if v != "" {
				h.Add(name, v)
				values++
			}
		}
		set(HeaderImpersonateUser, user)
		set(HeaderImpersonateGroup, group1)
		set(HeaderImpersonateGroup, group2)
		set(HeaderImpersonateUID, uid)
		if extraValue != "" {
			// Any header value, including an empty one, counts as a request.
			h[HeaderImpersonateExtraPrefix+extraKey] = append(h[HeaderImpersonateExtraPrefix+extraKey], extraValue)
			values++
		}
		reqs, err := ParseImpersonation(h)
		if (err != nil) != (user == "" && values > 0) {
			t.Fatalf("error %v with user %q and %d values", err, user, values)
		}
		if err != nil {
			return
		}
		if len(reqs) != values {
			t.Fatalf("%d requests for %d header values: %+v", len(reqs), values, reqs)
		}
		again, _ := ParseImpersonation(h)
		if !reflect.DeepEqual(reqs, again) {
			t.Fatalf("not deterministic: %+v then %+v", reqs, again)
		}
		if len(reqs) == 0 {
			return
		}
		u := impersonatedUser(reqs, len(h.Values(HeaderImpersonateGroup)) > 0)
		if u.Name == "" || (!slices.Contains(u.Groups, GroupAuthenticated) && !slices.Contains(u.Groups, GroupUnauthenticated)) {
			t.Fatalf("impersonated user %#v", u)
		}
		if u.UID != uid {
			t.Fatalf("uid %q, want %q", u.UID, uid)
		}
	})
}
