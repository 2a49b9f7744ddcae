package authn

import (
	"encoding/csv"
	"errors"
	"io"
	"net/http/httptest"
	"reflect"
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
