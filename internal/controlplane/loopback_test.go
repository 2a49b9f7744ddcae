package controlplane

import (
	"net/http"
	"slices"
	"testing"
)

// TestLoopbackAuthenticates: the in-memory loopback token is
// system:apiserver in system:masters, and nothing else is.
func TestLoopbackAuthenticates(t *testing.T) {
	t.Parallel()
	l, err := newLoopback()
	if err != nil {
		t.Fatal(err)
	}
	other, err := newLoopback()
	if err != nil {
		t.Fatal(err)
	}
	if l.token == other.token {
		t.Fatal("two loopback credentials share a token")
	}
	for header, want := range map[string]bool{
		"Bearer " + l.token:     true,
		"bearer " + l.token:     true,
		"Bearer " + other.token: false,
		"Bearer ":               false,
		"":                      false,
		"Basic " + l.token:      false,
	} {
		r, _ := http.NewRequest(http.MethodGet, "https://127.0.0.1/api", nil)
		if header != "" {
			r.Header.Set("Authorization", header)
		}
		u, ok, err := l.Authenticate(r)
		if err != nil || ok != want {
			t.Errorf("%q: ok %v err %v, want ok %v", header, ok, err, want)
			continue
		}
		if ok && (u.Name != "system:apiserver" || !slices.Equal(u.Groups, []string{"system:masters"}) || u.UID == "") {
			t.Errorf("%q: user %+v", header, u)
		}
	}
	cfg := l.config("https://127.0.0.1:1", []byte("ca"))
	if cfg.BearerToken != l.token || cfg.Host != "https://127.0.0.1:1" || string(cfg.CAData) != "ca" {
		t.Errorf("config %+v", cfg)
	}
}
