package apiserver

import (
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/dnsplane/dnsplane/internal/features"
	"github.com/dnsplane/dnsplane/internal/strictdecode"
)

// fieldValidation is the KEP-2885 directive for unknown and duplicate fields.
type fieldValidation string

const (
	fieldValidationStrict fieldValidation = "Strict"
	fieldValidationWarn   fieldValidation = "Warn"
	fieldValidationIgnore fieldValidation = "Ignore"
)

// parseWriteOptions checks the write options of a POST, PUT or PATCH
// (fieldManager, see validateFieldManager) and returns the fieldValidation
// directive. It reads ?fieldValidation= as kube-apiserver does: the
// first value wins, "" means Warn, values are case-sensitive, and a bad one
// is a 422 naming the options kind of the verb. With the
// ServerSideFieldValidation gate off the parameter is ignored altogether.
func (s *Server) parseWriteOptions(r *http.Request, optionsKind string) (fieldValidation, error) {
	if err := validateFieldManager(r, optionsKind); err != nil {
		return "", err
	}
	if !s.gates.Enabled(features.ServerSideFieldValidation) {
		return fieldValidationIgnore, nil
	}
	var v string
	if values := r.URL.Query()["fieldValidation"]; len(values) > 0 {
		v = values[0]
	}
	switch fieldValidation(v) {
	case "":
		return fieldValidationWarn, nil
	case fieldValidationStrict, fieldValidationWarn, fieldValidationIgnore:
		return fieldValidation(v), nil
	}
	return "", apierrors.NewInvalid(schema.GroupKind{Group: "meta.k8s.io", Kind: optionsKind}, "", field.ErrorList{
		field.NotSupported(field.NewPath("fieldValidation"), v, []string{"", "Ignore", "Strict", "Warn"}),
	})
}

// validateFieldManager checks ?fieldManager= as upstream's
// ValidateCreateOptions/UpdateOptions/PatchOptions do: at most 128
// characters, printable. An absent value is fine (the server derives one).
func validateFieldManager(r *http.Request, optionsKind string) error {
	fm := r.URL.Query().Get("fieldManager")
	if fm == "" {
		return nil
	}
	if errs := metav1validation.ValidateFieldManager(fm, field.NewPath("fieldManager")); len(errs) > 0 {
		return apierrors.NewInvalid(schema.GroupKind{Group: "meta.k8s.io", Kind: optionsKind}, "", errs)
	}
	return nil
}

// applyFieldValidation acts on the unknown and duplicate fields of a create
// or update body: Strict rejects with kube-apiserver's 400, Warn adds one
// Warning header per problem, Ignore drops them.
func applyFieldValidation(w http.ResponseWriter, res *Resource, fv fieldValidation, d decoded) error {
	if len(d.problems) == 0 || fv == fieldValidationIgnore {
		return nil
	}
	texts := make([]string, len(d.problems))
	for i, p := range d.problems {
		texts[i] = problemText(p, d.format)
	}
	if fv == fieldValidationStrict {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: strict decoding error: %s",
			res.GVK.Kind, res.GVK.Version, res.GVK.Kind, strings.Join(texts, ", ")))
	}
	var rec warningRecorder
	for _, t := range texts {
		rec.add(t)
	}
	rec.write(w.Header())
	return nil
}

// problemText is the message of one unknown or duplicate field. JSON bodies
// get upstream's text byte for byte; YAML bodies, which upstream reports as
// `line 14: key "paused" already set in map` without a path (and unknown
// fields without a line), get the same path-based text plus the line of the
// key in the body as sent: `duplicate field "spec.paused" (line 14)`.
func problemText(p strictdecode.FieldProblem, format strictdecode.Format) string {
	if format == strictdecode.YAML && p.Pos.Line > 0 {
		return fmt.Sprintf("%s (line %d)", p.Error(), p.Pos.Line)
	}
	return p.Error()
}

// Limits of kube-apiserver's warning recorder.
const (
	maxWarningsRunes     = 4096
	truncatedWarningRune = 256
)

// warningRecorder collects Warning headers as kube-apiserver's does:
// duplicates and empty texts dropped; past 4096 runes in all, every warning
// is cut to 256 runes, and once that budget is spent too, later ones are
// dropped.
type warningRecorder struct {
	texts     []string
	seen      map[string]bool
	runes     int
	truncated bool
}

func (w *warningRecorder) add(text string) {
	if text == "" || w.seen[text] {
		return
	}
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	w.seen[text] = true
	n := utf8.RuneCountInString(text)
	if !w.truncated && w.runes+n > maxWarningsRunes {
		w.truncated = true
		w.runes = 0
		for i, t := range w.texts {
			w.texts[i] = truncateRunes(t, truncatedWarningRune)
			w.runes += utf8.RuneCountInString(w.texts[i])
		}
	}
	if w.truncated {
		text = truncateRunes(text, truncatedWarningRune)
		n = utf8.RuneCountInString(text)
		if w.runes+n > maxWarningsRunes {
			return
		}
	}
	w.texts = append(w.texts, text)
	w.runes += n
}

func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// write adds one `Warning: 299 - "<text>"` header per warning, with `"` and
// `\` escaped, as k8s.io/apimachinery's NewWarningHeader formats them.
func (w *warningRecorder) write(h http.Header) {
	for _, t := range w.texts {
		var b strings.Builder
		b.WriteString(`299 - "`)
		for _, r := range t {
			if r == '"' || r == '\\' {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		b.WriteByte('"')
		h.Add("Warning", b.String())
	}
}

// headerWarnings is the warning.Recorder (k8s.io/apiserver/pkg/warning)
// of a request: what a strategy or admission plugin adds, as upstream's
// PodSecurity plugin does with warning.AddWarning, becomes a Warning
// header before the response is written.
type headerWarnings struct {
	h   http.Header
	rec warningRecorder
}

func (w *headerWarnings) AddWarning(_, text string) {
	before := len(w.rec.texts)
	w.rec.add(text)
	if len(w.rec.texts) > before {
		one := warningRecorder{texts: w.rec.texts[before:]}
		one.write(w.h)
	}
}
