package filters

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
)

// RequestMetrics are kube-apiserver's request metrics, under the same names
// so existing dashboards work: apiserver_request_total and
// apiserver_request_duration_seconds by verb, resource and code.
type RequestMetrics struct {
	total    *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewRequestMetrics registers the request metrics with reg. One server has
// one, shared by every handler chain it builds.
func NewRequestMetrics(reg prometheus.Registerer) (*RequestMetrics, error) {
	m := &RequestMetrics{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_request_total",
			Help: "Counter of API requests by verb, group, version, resource, subresource and HTTP code.",
		}, []string{"verb", "group", "version", "resource", "subresource", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_request_duration_seconds",
			Help:    "Response latency by verb, group, version, resource and subresource (watches excluded).",
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"verb", "group", "version", "resource", "subresource"}),
	}
	for _, c := range []prometheus.Collector{m.total, m.duration} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering request metrics: %w", err)
		}
	}
	return m, nil
}

// WithRequestMetrics counts every request into m once it is answered, by
// the verb and resource resolver gives it (a non-resource request by its
// method: get, post, …) and the response code. Watches are counted but not
// timed: their duration is the client's choice.
func WithRequestMetrics(next http.Handler, m *RequestMetrics, resolver apirequest.RequestInfoResolver) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(rec, r)
		verb, group, version, resource, subresource := nonResourceVerb(r.Method), "", "", "", ""
		if info, ok := resourceInfo(resolver, r); ok {
			verb, group, version, resource, subresource = info.Verb, info.APIGroup, info.APIVersion, info.Resource, info.Subresource
		}
		m.total.WithLabelValues(verb, group, version, resource, subresource, strconv.Itoa(rec.code)).Inc()
		if verb != "watch" {
			m.duration.WithLabelValues(verb, group, version, resource, subresource).Observe(time.Since(start).Seconds())
		}
	})
}

func nonResourceVerb(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead:
		return "get"
	case http.MethodPost:
		return "post"
	}
	return method
}

// statusRecorder remembers the response code and keeps http.Flusher working
// for watch streams.
type statusRecorder struct {
	http.ResponseWriter
	code        int
	wroteHeader bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wroteHeader {
		s.code, s.wroteHeader = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *statusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if h, ok := s.ResponseWriter.(http.Hijacker); ok {
		return h.Hijack()
	}
	return nil, nil, errors.New("hijacking not supported")
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
