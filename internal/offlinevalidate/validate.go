package offlinevalidate

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/dnsplane/dnsplane/api"
	"github.com/dnsplane/dnsplane/internal/registry"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/strictdecode"
	"github.com/dnsplane/dnsplane/internal/validation"
)

// Status is the outcome for one object.
type Status int

// The outcomes. Only Invalid makes validation fail.
const (
	Valid   Status = iota // decoded and passed validation
	Invalid               // has at least one Finding
	Skipped               // a kind dnsplane does not serve: not checked, not an error
)

// Finding is one problem, located in its source.
type Finding struct {
	Source string
	Pos    strictdecode.Position // zero when the position is not known
	Field  string                // field path; "" for whole-document problems
	// Message is the problem in upstream wording. For field errors it is the
	// full field.Error text, which already starts with the field path.
	Message string
}

// String renders the finding as "file:line:col: field: message".
func (f Finding) String() string {
	loc := f.Source
	if f.Pos.Line > 0 {
		loc = fmt.Sprintf("%s:%d:%d", f.Source, f.Pos.Line, f.Pos.Column)
	}
	return loc + ": " + f.Message
}

// Object is the result for one object of a source.
type Object struct {
	Source     string
	Index      int // 0-based position in the source
	Pos        strictdecode.Position
	APIVersion string
	Kind       string
	Name       string
	Status     Status
	Findings   []Finding
	// Value is the decoded and defaulted object (a pointer to a type from
	// package api), nil when the document could not be decoded or was
	// skipped.
	Value any
}

// Validator checks manifests with a fixed set of feature gates.
type Validator struct {
	Options validation.Options
	// ClusterDomain is the cluster domain the DNS rules protect; empty
	// means cluster.local.
	ClusterDomain string
	// OwnDNSAddresses are the addresses the cluster's DNS serves on, which
	// no DNS forwarder may name (a forwarding loop); nil means
	// DefaultOwnDNSAddresses.
	OwnDNSAddresses []netip.AddrPort
}

// DefaultOwnDNSAddresses is the cluster DNS Service's address with `up`'s
// and kubeadm's service range 10.96.0.0/12 (operator.ServiceAddress):
// `validate` refuses a forwarder naming it, as the API server of `up`
// does (docs/dns-operator.md, "Forwarding loops"). The addresses `up`
// listens on depend on its flags and are left to its API server.
var DefaultOwnDNSAddresses = []netip.AddrPort{netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 96, 0, 10}), 53)}

// strategies are the server's, without what only a server has (cluster
// IPs, namespaces to read).
func (v Validator) strategies() map[schema.GroupKind]rest.Strategy {
	own := v.OwnDNSAddresses
	if own == nil {
		own = DefaultOwnDNSAddresses
	}
	return registry.Strategies(registry.Config{DNS: v.Options, ClusterDomain: v.ClusterDomain,
		OwnDNSAddresses: func() []netip.AddrPort { return slices.Clone(own) }})
}

// ValidateSource checks every object of one source. A source that cannot be
// read or split into documents yields one Invalid object carrying the error.
func (v Validator) ValidateSource(ctx context.Context, src Source) []Object {
	data, err := src.read()
	if err != nil {
		return []Object{failed(src.Name, fmt.Sprintf("cannot read: %v", err))}
	}
	docs, err := strictdecode.Split(data)
	if err != nil {
		o := failed(src.Name, err.Error())
		var ie *strictdecode.InputError
		if errors.As(err, &ie) && !ie.Pos.IsZero() {
			o.Pos, o.Findings[0].Pos, o.Findings[0].Message = ie.Pos, ie.Pos, ie.Err.Error()
		}
		return []Object{o}
	}
	if len(docs) == 0 {
		return []Object{failed(src.Name, "no objects: the input is empty")}
	}
	out := make([]Object, 0, len(docs))
	for _, d := range docs {
		if ctx.Err() != nil {
			break
		}
		out = append(out, v.validateDocument(src.Name, d))
	}
	return out
}

func failed(source, msg string) Object {
	return Object{Source: source, Status: Invalid, Findings: []Finding{{Source: source, Message: msg}}}
}

func (v Validator) validateDocument(source string, d *strictdecode.Document) Object {
	o := Object{Source: source, Index: d.Index(), Pos: d.Start()}
	report := func(path, msg string) {
		f := Finding{Source: source, Field: path, Message: msg, Pos: o.Pos}
		if p, ok := nearestPosition(d, path); ok {
			f.Pos = p
		}
		o.Findings = append(o.Findings, f)
	}

	apiVersion, kind, err := d.TypeMeta()
	if err != nil {
		report("", err.Error())
		o.Status = Invalid
		return o
	}
	o.APIVersion, o.Kind = apiVersion, kind
	if apiVersion == "" || kind == "" {
		if apiVersion == "" {
			report("", field.Required(field.NewPath("apiVersion"), "must be set").Error())
		}
		if kind == "" {
			report("", field.Required(field.NewPath("kind"), "must be set").Error())
		}
		o.Status = Invalid
		return o
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		report("apiVersion", field.Invalid(field.NewPath("apiVersion"), apiVersion, err.Error()).Error())
		o.Status = Invalid
		return o
	}
	res, ok := api.Lookup(gv.WithKind(kind))
	if !ok {
		o.Status = Skipped
		return o
	}
	obj := res.New()

	problems, err := d.Decode(obj)
	if err != nil {
		// A fatal decode error (syntax, wrong type) wins over strict errors,
		// as in kube-apiserver: the object cannot be validated further.
		report("", err.Error())
		o.Status = Invalid
		return o
	}
	for _, p := range problems {
		f := Finding{Source: source, Field: p.Path, Message: p.Path + ": " + p.Error(), Pos: p.Pos}
		if f.Pos.Line == 0 {
			f.Pos = o.Pos
		}
		o.Findings = append(o.Findings, f)
	}
	o.Name = objectName(obj)
	o.Value = obj

	for _, fe := range v.validateCreate(res, obj) {
		report(fe.Field, fe.Error())
	}
	sort.SliceStable(o.Findings, func(i, j int) bool { return o.Findings[i].Pos.Line < o.Findings[j].Pos.Line })
	if len(o.Findings) > 0 {
		o.Status = Invalid
	}
	return o
}

// validateCreate runs what the API server runs on a create of obj: the
// kind's strategy prepares it (defaults, status cleared), then
// rest.ValidateCreate checks the metadata and the strategy's rules. What
// the request would supply is filled in first, as kubectl and the server
// would: the namespace kubectl sends for a namespaced object without one,
// and a name generated from generateName.
func (v Validator) validateCreate(res api.Resource, obj any) field.ErrorList {
	m, err := meta.Accessor(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("metadata"), err)}
	}
	if res.Namespaced && m.GetNamespace() == "" {
		m.SetNamespace(metav1.NamespaceDefault)
	}
	if m.GetName() == "" && m.GetGenerateName() != "" {
		m.SetName(m.GetGenerateName() + "x0000")
	}
	s := v.strategies()[res.GVK.GroupKind()]
	ctx := context.Background()
	s.PrepareForCreate(ctx, obj)
	return rest.ValidateCreate(ctx, s, res.Namespaced, obj)
}

// objectName returns namespace/name for display.
func objectName(obj any) string {
	m, ok := obj.(interface {
		GetName() string
		GetNamespace() string
	})
	if !ok {
		return ""
	}
	if m.GetNamespace() == "" {
		return m.GetName()
	}
	return m.GetNamespace() + "/" + m.GetName()
}

// nearestPosition finds path in the document, or failing that its closest
// ancestor: a Required error names a field that is absent by definition, and
// the object that should hold it is the useful place to point at.
func nearestPosition(d *strictdecode.Document, path string) (strictdecode.Position, bool) {
	for path != "" {
		if p, ok := d.Position(path); ok {
			return p, true
		}
		cut := strings.LastIndexAny(path, ".[")
		if cut < 0 {
			break
		}
		path = path[:cut]
	}
	return strictdecode.Position{}, false
}
