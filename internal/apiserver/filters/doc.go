// Package filters holds the API server's HTTP filters, in the role of
// k8s.io/apiserver's pkg/server/filters and pkg/endpoints/filters: each one
// wraps an http.Handler (or, for the connection limit, the listener) with
// one bound or one measurement, and knows nothing of the handlers inside.
//
// The API server composes them in kube-apiserver's order
// (DefaultBuildHandlerChain), outermost first:
//
//	WithRequestMetrics   apiserver_request_total and _duration_seconds
//	WithRequestDeadline  --request-timeout, or a smaller ?timeout=
//	  (authentication, impersonation: internal/authn)
//	WithUserLimits       per-user lists and watches (APF's role)
//	WithMaxInFlight      --max-requests-inflight, --max-mutating-requests-inflight
//	  (authorization: internal/authz)
//
// and LimitConnections wraps the HTTPS listener (--max-connections), whose
// budget ExecBudget shares with exec sessions.
//
// The filters learn what a request is for (verb, resource, subresource)
// from a request.RequestInfoResolver the server passes them: the server's
// own router, so that a filter counts as a watch or a list exactly what the
// handler will serve as one.
package filters
