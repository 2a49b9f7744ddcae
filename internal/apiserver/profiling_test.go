package apiserver

import (
	"context"
	"strings"
	"testing"
)

// TestProfiling: /debug/pprof/ serves Go's index and named profiles, as
// kube-apiserver's --profiling does.
func TestProfiling(t *testing.T) {
	t.Parallel()
	ts := sharedServer(t)
	for _, tc := range []struct{ path, debug, want string }{
		{"/debug/pprof/", "", "goroutine"},
		{"/debug/pprof/goroutine", "1", "goroutine profile:"},
		{"/debug/pprof/cmdline", "", ""},
	} {
		req := ts.client.CoreV1().RESTClient().Get().AbsPath(tc.path)
		if tc.debug != "" {
			req = req.Param("debug", tc.debug)
		}
		body, err := req.DoRaw(context.Background())
		if err != nil {
			t.Fatalf("GET %s: %v", tc.path, err)
		}
		if !strings.Contains(string(body), tc.want) {
			t.Errorf("GET %s: %.200q, want %q in it", tc.path, body, tc.want)
		}
	}
}
