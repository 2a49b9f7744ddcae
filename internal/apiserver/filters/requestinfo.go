package filters

import (
	"net/http"
	"strings"

	apirequest "k8s.io/apiserver/pkg/endpoints/request"
)

// resourceInfo is what resolver says of r when r is a resource request;
// ok=false for other paths (discovery, /healthz, unknown) and for a
// resolver error, which the handler will answer itself.
func resourceInfo(resolver apirequest.RequestInfoResolver, r *http.Request) (info *apirequest.RequestInfo, ok bool) {
	info, err := resolver.NewRequestInfo(r)
	if err != nil || info == nil || !info.IsResourceRequest {
		return nil, false
	}
	return info, true
}

// longRunningVerbs and longRunningSubresources are what kube-apiserver's
// BasicLongRunningRequestCheck is configured with
// (cmd/kube-apiserver/app/server.go): such requests have no deadline and do
// not count against max-in-flight, because they are meant to stay open. Of
// these we serve only watch; the others are listed so a future handler for
// them is treated as upstream treats it.
var (
	longRunningVerbs        = map[string]bool{"watch": true, "proxy": true}
	longRunningSubresources = map[string]bool{"attach": true, "exec": true, "proxy": true, "log": true, "portforward": true}
)

// isLongRunning reports what kube's long-running check would for r. It
// avoids resolving the request unless it can be long-running (a query
// naming watch, a last path segment naming a long-running subresource), so
// the common request pays only a few string scans.
func isLongRunning(r *http.Request, resolver apirequest.RequestInfoResolver) bool {
	if !strings.Contains(r.URL.RawQuery, "watch") && !hasLongRunningTail(r.URL.Path) {
		return false
	}
	info, ok := resourceInfo(resolver, r)
	return ok && (longRunningVerbs[info.Verb] || longRunningSubresources[info.Subresource])
}

// hasLongRunningTail reports whether the last segment of path names a
// long-running subresource (it may also be an object's name; the caller
// resolves the request to tell).
func hasLongRunningTail(path string) bool {
	return longRunningSubresources[path[strings.LastIndexByte(path, '/')+1:]]
}

// isMutating follows kube's max-in-flight filter: get, list and watch
// (GET and HEAD, for resources and other paths alike) are read-only,
// everything else mutates.
func isMutating(r *http.Request) bool {
	return r.Method != http.MethodGet && r.Method != http.MethodHead
}

// isProbe reports the probe paths, which are exempt from max-in-flight when
// read, as kube-apiserver's default API Priority and Fairness configuration
// exempts them (the "probes" FlowSchema sends get of /healthz, /livez and
// /readyz to the "exempt" priority level): a liveness probe rejected
// because the server is busy would get a busy server restarted. They are
// cheap, and still bounded by the request deadline and the connection
// limit.
func isProbe(path string) bool {
	return path == "/healthz" || path == "/livez" || path == "/readyz"
}

// isTrue parses a boolean query parameter as kube-apiserver does: anything
// but "", "0" and "false" is true.
func isTrue(v string) bool { return v != "" && v != "0" && v != "false" }

// retryAfter is kube-apiserver's Retry-After for a 429 from max-in-flight
// (maxinflight.go); client-go waits that long and retries on its own.
const retryAfter = "1"

// TooManyRequestsMessage is kube-apiserver's body for the 429 of
// max-in-flight and APF, sent like upstream as text/plain (not a Status):
// client-go turns it into a TooManyRequests error and retries.
const TooManyRequestsMessage = "Too many requests, please try again later."

// tooManyRequests answers kube's 429 of max-in-flight and APF.
func tooManyRequests(w http.ResponseWriter) {
	w.Header().Set("Retry-After", retryAfter)
	http.Error(w, TooManyRequestsMessage, http.StatusTooManyRequests)
}
