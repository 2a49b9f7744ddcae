package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/dnsplane/dnsplane/internal/apiserver/filters"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// writeJSON writes v as the JSON body of a response with the given code.
// The body ends with a newline, as kube-apiserver's: its JSON serializer
// (k8s.io/apimachinery/pkg/runtime/serializer/json, Serializer.doEncode)
// writes every object, list, Status and Table with json.Encoder, which
// ends what it writes with '\n', so clients comparing bodies see the same
// bytes.
func writeJSON(w http.ResponseWriter, code int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		code = http.StatusInternalServerError
		body, _ = json.Marshal(statusFor(apierrors.NewInternalError(fmt.Errorf("encoding response: %w", err))))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(body, '\n'))
}

// writeRawJSON writes v as kube-apiserver writes the bodies of its
// non-API paths (/version): indented by two spaces and without a trailing
// newline (k8s.io/apiserver/pkg/endpoints/handlers/responsewriters,
// WriteRawJSON).
func writeRawJSON(w http.ResponseWriter, code int, v any) {
	body, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, statusFor(apierrors.NewInternalError(fmt.Errorf("encoding response: %w", err))))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// statusFor returns the metav1.Status body of an API error, with kind and
// apiVersion set as kube-apiserver sends them.
func statusFor(err *apierrors.StatusError) metav1.Status {
	s := err.Status()
	s.Kind, s.APIVersion = "Status", "v1"
	return s
}

// writeError writes err as a JSON metav1.Status. Errors that are not API
// errors are internal errors: logged, and reported without internals.
func writeError(w http.ResponseWriter, log *slog.Logger, err error) {
	writeStatus(w, log, err, false)
}

// writeErrorNegotiated writes err as a metav1.Status in the form r's Accept
// header prefers, protobuf or JSON (errorProtobuf), as kube-apiserver's
// ErrorNegotiated: client-go's clients of built-in kinds ask for protobuf
// first and decode a protobuf Status, for any kind.
func writeErrorNegotiated(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	writeStatus(w, log, err, errorProtobuf(r.Header.Get("Accept")))
}

func writeStatus(w http.ResponseWriter, log *slog.Logger, err error, protobuf bool) {
	var se *apierrors.StatusError
	switch {
	case errors.As(err, &se):
	case errors.Is(err, context.DeadlineExceeded):
		// The request deadline (filters.WithRequestDeadline) ran out in
		// a path that does not map storage errors itself.
		se = filters.ErrRequestTimeout()
	default:
		log.Error("internal error", "err", err)
		se = apierrors.NewInternalError(err)
	}
	s := statusFor(se)
	if s.Details != nil && s.Details.RetryAfterSeconds > 0 {
		// As kube-apiserver: client-go waits this long before retrying.
		w.Header().Set("Retry-After", strconv.Itoa(int(s.Details.RetryAfterSeconds)))
	}
	if protobuf {
		if err := writeProtobuf(w, int(s.Code), &s); err == nil {
			return
		}
		// A Status always encodes (it is upstream's type); should it
		// not, the client still gets the error, as JSON.
	}
	writeJSON(w, int(s.Code), s)
}

// errNotFoundPath is kube-apiserver's answer for a path it does not serve.
func errNotFoundPath() *apierrors.StatusError {
	return apierrors.NewGenericServerResponse(http.StatusNotFound, "", schema.GroupResource{}, "", "the server could not find the requested resource", 0, false)
}

// errMethodNotAllowed is the answer for a verb a resource does not serve.
func errMethodNotAllowed(verb string, gr schema.GroupResource) *apierrors.StatusError {
	return apierrors.NewMethodNotSupported(gr, verb)
}
