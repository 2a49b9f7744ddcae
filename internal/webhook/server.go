// Package webhook is dnsplane's admission webhook for stock Kubernetes
// clusters (docs/kubernetes.md): an HTTPS server that answers
// admission.k8s.io/v1 AdmissionReviews on /mutate and /validate,
// dispatching each request by its resource to a Reviewer; the certificates
// it serves with (certs.go), and the match conditions its webhook
// configurations carry (match.go). What each kind's review does lives in
// other packages: internal/webhook/poddns for the nine kinds with a pod
// template, and the DNS resource's validation for operator.dnsplane.io.
package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Reviewer answers one admission request. It must return a response (the
// server sets its UID); a nil response allows the request.
type Reviewer func(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse

// Routes are the reviewers per resource, for each endpoint.
type Routes struct {
	Mutate   map[schema.GroupVersionResource]Reviewer
	Validate map[schema.GroupVersionResource]Reviewer
}

// MaxRequestBytes is the largest request body read: kube-apiserver's own
// limit on a request body (3 MiB, k8s.io/apiserver's MaxRequestBodyBytes),
// so any object the server accepted fits, and nothing larger is buffered.
const MaxRequestBytes = 3 << 20

// ReviewTimeout bounds one review. kube-apiserver gives up on a webhook
// after the configuration's timeoutSeconds (10 in dnsplane's), and the
// work of a review is in-memory, so this only stops a runaway.
const ReviewTimeout = 10 * time.Second

// Handler serves the webhook's endpoints: POST /mutate, POST /validate,
// GET /healthz and GET /readyz (ready reports whether it can serve: nil
// when it has its certificate).
func Handler(routes Routes, ready func() error, logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /mutate", &reviewHandler{routes: routes.Mutate, logger: logger, endpoint: "mutate"})
	mux.Handle("POST /validate", &reviewHandler{routes: routes.Validate, logger: logger, endpoint: "validate"})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if ready != nil {
			if err := ready(); err != nil {
				http.Error(w, err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		_, _ = io.WriteString(w, "ok")
	})
	return mux
}

type reviewHandler struct {
	routes   map[schema.GroupVersionResource]Reviewer
	logger   *slog.Logger
	endpoint string
}

func (h *reviewHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		// kube-apiserver always sends JSON; anything else is not it.
		http.Error(w, fmt.Sprintf("unsupported Content-Type %q, want application/json", r.Header.Get("Content-Type")), http.StatusUnsupportedMediaType)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			http.Error(w, fmt.Sprintf("request body larger than %d bytes", MaxRequestBytes), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "reading request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil {
		http.Error(w, "decoding AdmissionReview: "+err.Error(), http.StatusBadRequest)
		return
	}
	if gvk := review.GroupVersionKind(); gvk != admissionv1.SchemeGroupVersion.WithKind("AdmissionReview") || review.Request == nil {
		http.Error(w, fmt.Sprintf("want an admission.k8s.io/v1 AdmissionReview with a request, got %s", gvk), http.StatusBadRequest)
		return
	}
	req := review.Request
	ctx, cancel := context.WithTimeout(r.Context(), ReviewTimeout)
	defer cancel()
	resp := h.review(ctx, req)
	resp.UID = req.UID
	out := admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(&out); err != nil {
		h.logger.LogAttrs(ctx, slog.LevelWarn, "writing AdmissionReview", slog.Any("err", err))
	}
	level := slog.LevelDebug
	if !resp.Allowed {
		level = slog.LevelInfo
	}
	attrs := []slog.Attr{
		slog.String("endpoint", h.endpoint), slog.String("uid", string(req.UID)),
		slog.String("operation", string(req.Operation)), slog.String("resource", req.Resource.Resource),
		slog.String("namespace", req.Namespace), slog.String("name", req.Name),
		slog.Bool("allowed", resp.Allowed), slog.Bool("patched", len(resp.Patch) > 0),
		slog.Duration("took", time.Since(start)),
	}
	if resp.Result != nil && !resp.Allowed {
		attrs = append(attrs, slog.String("reason", resp.Result.Message))
	}
	h.logger.LogAttrs(ctx, level, "admission review", attrs...)
}

// review dispatches by resource. Subresources (pods/status,
// deployments/scale, …) carry no pod spec the webhook judges; resources
// without a route are allowed, so a configuration that sends more than it
// should costs latency, not availability.
func (h *reviewHandler) review(ctx context.Context, req *admissionv1.AdmissionRequest) (resp *admissionv1.AdmissionResponse) {
	defer func() {
		// A bug in one review must refuse that request, not kill the
		// server every other request goes through.
		if p := recover(); p != nil {
			h.logger.LogAttrs(ctx, slog.LevelError, "review panicked", slog.Any("panic", p), slog.String("uid", string(req.UID)))
			st := apierrors.NewInternalError(fmt.Errorf("reviewing %s: %v", req.Resource.Resource, p)).Status()
			resp = &admissionv1.AdmissionResponse{Allowed: false, Result: &st}
		}
	}()
	gvr := schema.GroupVersionResource{Group: req.Resource.Group, Version: req.Resource.Version, Resource: req.Resource.Resource}
	rev, ok := h.routes[gvr]
	if req.SubResource != "" || !ok || rev == nil {
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	if resp = rev(ctx, req); resp == nil {
		resp = &admissionv1.AdmissionResponse{Allowed: true}
	}
	return resp
}
