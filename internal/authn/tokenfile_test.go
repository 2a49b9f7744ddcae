package authn

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseTokenFile(t *testing.T) {
	tests := []struct {
		name         string
		in           string
		want         map[string]User
		wantErr      string
		wantWarnings []string
	}{
		{
			name: "three columns, no groups",
			in:   "tok1,alice,uid-a\n",
			want: map[string]User{"tok1": {Name: "alice", UID: "uid-a"}},
		},
		{
			name: "quoted groups",
			in:   `tok1,alice,uid-a,"system:masters,dev"` + "\n",
			want: map[string]User{"tok1": {Name: "alice", UID: "uid-a", Groups: []string{"system:masters", "dev"}}},
		},
		{
			name: "single unquoted group",
			in:   "tok1,alice,uid-a,dev\n",
			want: map[string]User{"tok1": {Name: "alice", UID: "uid-a", Groups: []string{"dev"}}},
		},
		{
			name: "group names are not trimmed, as in kube",
			in:   `tok1,alice,uid-a,"a, b"` + "\n",
			want: map[string]User{"tok1": {Name: "alice", UID: "uid-a", Groups: []string{"a", " b"}}},
		},
		{
			name: "empty group names are dropped",
			in:   `tok1,alice,uid-a,` + "\n" + `tok2,bob,uid-b,"a,,b,"` + "\n",
			want: map[string]User{
				"tok1": {Name: "alice", UID: "uid-a"},
				"tok2": {Name: "bob", UID: "uid-b", Groups: []string{"a", "b"}},
			},
		},
		{
			name: "columns after the fourth are ignored",
			in:   "tok1,alice,uid-a,dev,extra,more\n",
			want: map[string]User{"tok1": {Name: "alice", UID: "uid-a", Groups: []string{"dev"}}},
		},
		{
			name: "empty user and uid are accepted, as in kube",
			in:   "tok1,,\n",
			want: map[string]User{"tok1": {}},
		},
		{
			name: "quoted token containing a comma",
			in:   `"to,k",alice,uid-a` + "\n",
			want: map[string]User{"to,k": {Name: "alice", UID: "uid-a"}},
		},
		{
			name: "blank lines are skipped",
			in:   "\n\ntok1,alice,uid-a\n\n\ntok2,bob,uid-b\n\n",
			want: map[string]User{"tok1": {Name: "alice", UID: "uid-a"}, "tok2": {Name: "bob", UID: "uid-b"}},
		},
		{
			name: "CRLF line endings",
			in:   "tok1,alice,uid-a\r\ntok2,bob,uid-b\r\n",
			want: map[string]User{"tok1": {Name: "alice", UID: "uid-a"}, "tok2": {Name: "bob", UID: "uid-b"}},
		},
		{
			name: "no final newline",
			in:   "tok1,alice,uid-a",
			want: map[string]User{"tok1": {Name: "alice", UID: "uid-a"}},
		},
		{
			name: "empty file",
			in:   "",
			want: map[string]User{},
		},
		{
			name: "a leading # is part of the token, kube has no comments",
			in:   "#tok1,alice,uid-a\n",
			want: map[string]User{"#tok1": {Name: "alice", UID: "uid-a"}},
		},
		{
			name:    "a comment-like line fails the file, as in kube",
			in:      "tok1,alice,uid-a\n# admin tokens\n",
			wantErr: "token file line 2: must have at least 3 columns (token, user name, user uid), found 1",
		},
		{
			name:    "too few columns names the line",
			in:      "tok1,alice,uid-a\n\ntok2,bob\n",
			wantErr: "token file line 3: must have at least 3 columns (token, user name, user uid), found 2",
		},
		{
			name:    "whitespace-only line is a one-column record",
			in:      "tok1,alice,uid-a\n   \n",
			wantErr: "line 2: must have at least 3 columns",
		},
		{
			name:    "malformed quoting",
			in:      "tok1,alice,uid-a\ntok\"2,bob,uid-b\n",
			wantErr: `token file: parse error on line 2, column 4: bare " in non-quoted-field`,
		},
		{
			name:         "empty token is skipped with a warning",
			in:           "tok1,alice,uid-a\n,bob,uid-b\n",
			want:         map[string]User{"tok1": {Name: "alice", UID: "uid-a"}},
			wantWarnings: []string{"token file line 2: empty token, record ignored"},
		},
		{
			name:         "duplicate token: the last record wins with a warning",
			in:           "tok1,alice,uid-a\ntok2,bob,uid-b\ntok1,carol,uid-c,ops\n",
			want:         map[string]User{"tok1": {Name: "carol", UID: "uid-c", Groups: []string{"ops"}}, "tok2": {Name: "bob", UID: "uid-b"}},
			wantWarnings: []string{"token file line 3: duplicate of the token on line 1, the later record wins"},
		},
		{
			name: "multi-line quoted field: the record's first line is reported",
			in:   "tok1,alice,uid-a\n\"tok\n2\",bob\n",
			// The record starts on line 2 even though it ends on line 3.
			wantErr: "token file line 2: must have at least 3 columns",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tf, err := ParseTokenFile(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got := tokensOf(tf); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("tokens = %#v\nwant     %#v", got, tt.want)
			}
			if got := tf.Warnings(); !reflect.DeepEqual(got, tt.wantWarnings) {
				t.Errorf("warnings = %q, want %q", got, tt.wantWarnings)
			}
		})
	}
}

// tokensOf lists what a TokenFile holds, through its lookup path.
func tokensOf(tf *TokenFile) map[string]User {
	out := make(map[string]User, len(tf.tokens))
	for _, e := range tf.tokens {
		u, ok := tf.lookup(string(e.token))
		if !ok {
			panic("stored token does not look up: " + string(e.token))
		}
		out[string(e.token)] = u
	}
	return out
}

func TestLoadTokenFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(good, []byte(`tok1,alice,uid-a,"g1,g2"`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("tok1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		path    string
		wantErr string
	}{
		{name: "valid file", path: good},
		{name: "missing file", path: filepath.Join(dir, "nope.csv"), wantErr: "open token file: open " + filepath.Join(dir, "nope.csv")},
		{name: "errors name the path and line", path: bad, wantErr: "token file " + bad + " line 1: must have at least 3 columns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tf, err := LoadTokenFile(tt.path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]User{"tok1": {Name: "alice", UID: "uid-a", Groups: []string{"g1", "g2"}}}
			if got := tokensOf(tf); !reflect.DeepEqual(got, want) {
				t.Errorf("tokens = %#v, want %#v", got, want)
			}
		})
	}
}

func TestLookupReturnsACopy(t *testing.T) {
	tf, err := ParseTokenFile(strings.NewReader(`tok,alice,uid,"a,b"`))
	if err != nil {
		t.Fatal(err)
	}
	u, _ := tf.lookup("tok")
	u.Groups[0] = "system:masters"
	if again, _ := tf.lookup("tok"); again.Groups[0] != "a" {
		t.Fatalf("mutating a returned user changed the token file: %q", again.Groups)
	}
}
