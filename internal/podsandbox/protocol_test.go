package podsandbox

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeRequest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		data    string
		nfds    int
		want    Request
		wantErr string
	}{
		{name: "pipes", data: `{"argv":["sh","-c","id"],"env":["PATH=/bin"],"uid":0,"gid":0,"groups":[42,0]}`, nfds: 3,
			want: Request{Argv: []string{"sh", "-c", "id"}, Env: []string{"PATH=/bin"}, Groups: []uint32{42, 0}}},
		{name: "tty", data: `{"argv":["sh"],"uid":65534,"gid":65534,"tty":true}`, nfds: 1,
			want: Request{Argv: []string{"sh"}, UID: 65534, GID: 65534, TTY: true}},
		{name: "working directory", data: `{"argv":["./gai"],"uid":1,"gid":1,"dir":"/work"}`, nfds: 3,
			want: Request{Argv: []string{"./gai"}, UID: 1, GID: 1, Dir: "/work"}},
		{name: "relative working directory", data: `{"argv":["id"],"uid":1,"gid":1,"dir":"work"}`, nfds: 3, wantErr: "absolute"},
		{name: "tty with three descriptors", data: `{"argv":["sh"],"uid":1,"gid":1,"tty":true}`, nfds: 3, wantErr: "want 1"},
		{name: "no descriptors", data: `{"argv":["sh"],"uid":1,"gid":1}`, nfds: 0, wantErr: "want 3"},
		{name: "no command", data: `{"argv":[],"uid":1,"gid":1}`, nfds: 3, wantErr: "no command"},
		{name: "empty command", data: `{"argv":[""],"uid":1,"gid":1}`, nfds: 3, wantErr: "no command"},
		{name: "uid outside the range", data: `{"argv":["id"],"uid":65536,"gid":1}`, nfds: 3, wantErr: "outside the pod's user namespace"},
		{name: "group outside the range", data: `{"argv":["id"],"uid":1,"gid":1,"groups":[4294967295]}`, nfds: 3, wantErr: "outside"},
		{name: "negative uid", data: `{"argv":["id"],"uid":-1,"gid":1}`, nfds: 3, wantErr: "decoding"},
		{name: "NUL in an argument", data: `{"argv":["id","a\u0000b"],"uid":1,"gid":1}`, nfds: 3, wantErr: "NUL"},
		{name: "env without =", data: `{"argv":["id"],"env":["PATH"],"uid":1,"gid":1}`, nfds: 3, wantErr: "NAME=VALUE"},
		{name: "unknown field", data: `{"argv":["id"],"uid":1,"gid":1,"privileged":true}`, nfds: 3, wantErr: "unknown field"},
		{name: "two requests", data: `{"argv":["id"],"uid":1,"gid":1}{}`, nfds: 3, wantErr: "data after"},
		{name: "not JSON", data: `argv=id`, nfds: 3, wantErr: "decoding"},
		{name: "too large", data: `{"argv":["` + strings.Repeat("a", MaxRequestSize) + `"]}`, nfds: 3, wantErr: "over"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := DecodeRequest([]byte(tc.data), tc.nfds)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func FuzzDecodeRequest(f *testing.F) {
	f.Add([]byte(`{"argv":["sh","-c","id"],"env":["PATH=/bin"],"uid":0,"gid":0,"groups":[42,0]}`), 3)
	f.Add([]byte(`{"argv":["sh"],"tty":true}`), 1)
	f.Add([]byte(`{"argv":["x"],"uid":70000}`), 3)
	f.Fuzz(func(t *testing.T, data []byte, nfds int) {
		r, err := DecodeRequest(data, nfds)
		if err != nil {
			return
		}
		// What is accepted is what the sandbox relies on, and survives
		// the agent's encoding unchanged.
		if err := r.Validate(); err != nil {
			t.Fatalf("accepted an invalid request: %v", err)
		}
		if nfds != r.Files() {
			t.Fatalf("accepted %d descriptors for tty=%t", nfds, r.TTY)
		}
		again, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := DecodeRequest(again, nfds)
		if err != nil {
			t.Fatalf("re-encoded request refused: %v", err)
		}
		if !reflect.DeepEqual(normalize(r), normalize(r2)) {
			t.Fatalf("round trip: %+v != %+v", r, r2)
		}
	})
}

// normalize makes empty and nil slices equal, as JSON does.
func normalize(r Request) Request {
	if len(r.Env) == 0 {
		r.Env = nil
	}
	if len(r.Groups) == 0 {
		r.Groups = nil
	}
	return r
}
