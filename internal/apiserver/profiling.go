package apiserver

import (
	"net/http"
	"net/http/pprof"
	"strings"
)

// serveProfiling serves Go's runtime profiles under /debug/pprof/, as
// kube-apiserver does with --profiling (its default; k8s.io/apiserver's
// routes.Profiling): the index, profile, symbol, trace and the named
// profiles (heap, goroutine, allocs, …). Authorization is the non-resource
// URL's, like /metrics.
func serveProfiling(w http.ResponseWriter, r *http.Request) {
	switch strings.TrimPrefix(r.URL.Path, "/debug/pprof/") {
	case "cmdline":
		pprof.Cmdline(w, r)
	case "profile":
		pprof.Profile(w, r)
	case "symbol":
		pprof.Symbol(w, r)
	case "trace":
		pprof.Trace(w, r)
	default:
		// The index, and the named profiles by their name.
		pprof.Index(w, r)
	}
}
