package apiserver

import (
	"context"
	"crypto"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-base/featuregate"
	rbacregistryvalidation "k8s.io/kubernetes/pkg/registry/rbac/validation"

	"github.com/dnsplane/dnsplane/internal/admission"
	"github.com/dnsplane/dnsplane/internal/admission/noderestriction"
	"github.com/dnsplane/dnsplane/internal/agentdial"
	"github.com/dnsplane/dnsplane/internal/apiserver/filters"
	"github.com/dnsplane/dnsplane/internal/apiserver/store"
	"github.com/dnsplane/dnsplane/internal/authn"
	"github.com/dnsplane/dnsplane/internal/authz"
	"github.com/dnsplane/dnsplane/internal/discovery"
	"github.com/dnsplane/dnsplane/internal/features"
	"github.com/dnsplane/dnsplane/internal/openapi/document"
	"github.com/dnsplane/dnsplane/internal/registry"
	"github.com/dnsplane/dnsplane/internal/registry/core/service"
	"github.com/dnsplane/dnsplane/internal/storage"
	"github.com/dnsplane/dnsplane/internal/validation"
	dnsplaneversion "github.com/dnsplane/dnsplane/internal/version"
)

// objectStore is the storage the handlers need; *storage.Store implements it.
type objectStore interface {
	Create(ctx context.Context, key string, value []byte) (storage.KV, error)
	Get(ctx context.Context, key string) (storage.KV, error)
	List(ctx context.Context, keyPrefix string, opts storage.ListOptions) (storage.ListResult, error)
	Update(ctx context.Context, key string, value []byte, expectModRevision int64) (storage.KV, error)
	Delete(ctx context.Context, key string, expectModRevision int64) (storage.KV, error)
	DeletePrefix(ctx context.Context, keyPrefix string) (int64, error)
	Watch(ctx context.Context, keyPrefix string, fromRevision int64) (storage.Watch, error)
	CurrentRevision(ctx context.Context) (int64, error)
}

// Config is everything a Server needs.
type Config struct {
	Store      objectStore
	ServiceIPs service.Allocator
	// ServiceNodePorts allocates node ports (--service-node-port-range);
	// nil allocates none.
	ServiceNodePorts service.NodePortAllocator
	// ClusterDomain is the cluster DNS's domain, kept out of the DNS
	// resource's forwarders; "" means cluster.local.
	ClusterDomain string

	// OwnDNSAddresses, when set, returns the addresses the cluster's DNS
	// serves on, kept out of the DNS resource's forwarders (a forwarding
	// loop).
	OwnDNSAddresses func() []netip.AddrPort

	Gates         featuregate.FeatureGate // nil = defaults
	Authenticator authn.Authenticator     // nil = no authentication (tests only)
	// Authorizer decides what an authenticated user may do
	// (internal/authz, --authorization-mode); nil allows everything, and
	// every authenticated user may impersonate anyone.
	Authorizer authorizer.Authorizer
	// RuleResolver lists a user's rules for SelfSubjectRulesReview
	// (kubectl auth can-i --list): the authorizers' own
	// (authz.Authorizer.RuleResolver); nil lists AlwaysAllow's everything.
	RuleResolver authorizer.RuleResolver
	// RBACRules resolves RBAC rules for the escalation check on Role and
	// binding writes (authz.Authorizer.EscalationRules); nil when RBAC is
	// not a mode. Unused without an Authorizer.
	RBACRules rbacregistryvalidation.AuthorizationRuleResolver
	Logger    *slog.Logger
	// Metrics receives the request metrics; nil = a private registry.
	Metrics prometheus.Registerer
	// MetricsGatherer serves /metrics; nil = the private registry.
	MetricsGatherer prometheus.Gatherer
	// BookmarkInterval is how often idle watches get a BOOKMARK; 0 = 1m.
	BookmarkInterval time.Duration
	// WatchCacheCapacity is how many recent events of each resource the
	// watch cache keeps for watches resuming from a resourceVersion; 0 =
	// watchcache.DefaultCapacity.
	WatchCacheCapacity int
	// ResourceVersionWait is how long a get, list or watch at a
	// resourceVersion etcd has not reached yet waits for it before the 504
	// "Too large resource version"; 0 = 3s, kube-apiserver's.
	ResourceVersionWait time.Duration
	// SecurePort is advertised in the kubernetes Service (targetPort).
	SecurePort int
	// MaxObjectBytes is the largest object, as stored JSON, the store
	// accepts (etcd's --max-request-bytes). Patches and applies whose
	// result must be larger are refused before the work of building it;
	// 0 = unknown (an external etcd), and only the 3 MiB an object may
	// have when decoded applies.
	MaxObjectBytes int
	Now            func() time.Time

	// KubeletTLS is how the API server dials node agents for pods/exec:
	// its client certificate (pki.EnsureKubeletClient) and the CA that
	// signs the agents' serving certificates. nil = pods/exec answers 503.
	KubeletTLS *tls.Config
	// AgentDial says which agent endpoints pods/exec dials
	// (internal/agentdial); nil = agentdial.Rules{}: no loopback, port
	// 10250.
	AgentDial agentdial.Policy

	// ServiceAccountKey signs service account tokens
	// (serviceaccounts/token, pki.EnsureServiceAccountKey), and their
	// authenticator accepts what it signed; nil issues none.
	ServiceAccountKey crypto.Signer
	// ServiceAccountIssuer is the tokens' iss claim and the API server's
	// audience (kube-apiserver's --service-account-issuer).
	ServiceAccountIssuer string

	// Limits are the request limits Handler enforces (max in flight,
	// request timeout); nil = filters.DefaultLimits().
	Limits *filters.Limits

	// Informers are shared informers of the server's own loopback client
	// (kube-apiserver's VersionedInformers), which the caller starts once
	// the server serves: admission and the service account token
	// authenticator read what they need on the write path from them, not
	// from storage (docs/apiserver.md, "Reads on the write path"). The
	// authorizers read the same factory (internal/authz). nil: the plugins
	// that read the API through it (NamespaceLifecycle, NodeRestriction,
	// Priority) do not run, and the others read storage (tests only).
	Informers informers.SharedInformerFactory
	// Loopback is that client, for the live lookups kube makes on an
	// informer miss (a namespace created a moment ago). Set with Informers.
	Loopback kubernetes.Interface
}

// Server is the HTTP API server. Create it with New and serve Handler.
type Server struct {
	cfg       Config
	log       *slog.Logger
	reg       *Registry
	storage   objectStore
	gates     featuregate.FeatureGate
	now       func() time.Time
	discovery *discovery.Discovery
	openapi   *document.Set
	fields    *fieldManagers
	metrics   *filters.RequestMetrics
	gatherer  prometheus.Gatherer

	// execSessions counts exec sessions against the connection limit
	// (filters.ExecBudget).
	execSessions filters.ExecBudget

	// registerer takes the metrics of the connection limit, made by
	// ServeTLS (filters.LimitConnections).
	registerer prometheus.Registerer
	limits     filters.Limits
	inflight   *filters.MaxInFlight
	// perUser bounds one user's lists and watches (filters.UserLimits).
	perUser *filters.UserLimits

	// tokens authenticates service account tokens (serviceaccounts.go);
	// nil without a signing key.
	tokens authn.Authenticator
	// saTokens is tokens as k8s.io/apiserver's token authenticator, with
	// the audiences it checks, for TokenReview (reviews.go); apiAudiences
	// are the API server's (--api-audiences, the issuer).
	saTokens     authenticator.Token
	apiAudiences []string

	watchCaches *watchCaches

	// nodeRestriction admits node agents' writes (noderestriction.go).
	nodeRestriction *noderestriction.Plugin
	// admission is the one admission chain every write passes
	// (admission.go, internal/admission).
	admission *admission.Chain
}

// New returns a Server over cfg.Store.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, fmt.Errorf("apiserver: no store")
	}
	if cfg.Gates == nil {
		cfg.Gates = features.New()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.BookmarkInterval == 0 {
		cfg.BookmarkInterval = time.Minute
	}
	if cfg.ResourceVersionWait == 0 {
		cfg.ResourceVersionWait = defaultResourceVersionWait
	}
	if cfg.SecurePort == 0 {
		cfg.SecurePort = 6443
	}
	s := &Server{}
	tokens, saTokens, err := serviceAccountTokens(cfg, s)
	if err != nil {
		return nil, err
	}
	var tokenAuth authn.Authenticator
	var apiAudiences []string
	if saTokens != nil {
		tokenAuth, apiAudiences = authn.Token(saTokens), tokens.Audiences
	}
	reg, err := newRegistry(registry.Strategies(registry.Config{
		DNS:                  validation.OptionsFromGates(cfg.Gates),
		ServiceIPs:           cfg.ServiceIPs,
		ServiceNodePorts:     cfg.ServiceNodePorts,
		ClusterDomain:        cfg.ClusterDomain,
		OwnDNSAddresses:      cfg.OwnDNSAddresses,
		Namespaces:           s,
		Logger:               cfg.Logger,
		KubeletTLS:           cfg.KubeletTLS,
		AgentDial:            cfg.AgentDial,
		ExecSessions:         &s.execSessions,
		Now:                  cfg.Now,
		ServiceAccountTokens: tokens,
		Authorizer:           cfg.Authorizer,
	}))
	if err != nil {
		return nil, err
	}
	var oaOpts []document.Option
	if !cfg.Gates.Enabled(features.ServerSideFieldValidation) {
		// Not advertised, kubectl falls back to client-side validation.
		oaOpts = append(oaOpts, document.OmitFieldValidation())
	}
	oa, err := document.New(documentResources(reg), oaOpts...)
	if err != nil {
		return nil, fmt.Errorf("building OpenAPI documents: %w", err)
	}
	fields, err := newFieldManagers(reg)
	if err != nil {
		return nil, err
	}
	promReg := prometheus.NewRegistry()
	registerer, gatherer := cfg.Metrics, cfg.MetricsGatherer
	if registerer == nil {
		registerer = promReg
	}
	if gatherer == nil {
		gatherer = promReg
	}
	m, err := filters.NewRequestMetrics(registerer)
	if err != nil {
		return nil, err
	}
	limits := filters.DefaultLimits()
	if cfg.Limits != nil {
		limits = *cfg.Limits
	}
	if err := limits.Validate(); err != nil {
		return nil, err
	}
	inflight, err := filters.NewMaxInFlight(limits.MaxRequestsInflight, limits.MaxMutatingRequestsInflight, registerer)
	if err != nil {
		return nil, err
	}
	perUser, err := filters.NewUserLimits(limits, registerer)
	if err != nil {
		return nil, err
	}
	wcm, err := newWatchCacheMetrics(registerer)
	if err != nil {
		return nil, err
	}
	*s = Server{
		cfg: cfg, log: cfg.Logger, reg: reg, storage: cfg.Store,
		gates: cfg.Gates, now: cfg.Now,
		discovery: discovery.New(withReviews(discoveryResources(reg))), openapi: oa, fields: fields, metrics: m, gatherer: gatherer,
		registerer: registerer, limits: limits,
		inflight: inflight,
		perUser:  perUser,
		tokens:   tokenAuth,
		saTokens: saTokens, apiAudiences: apiAudiences,
		watchCaches: newWatchCaches(cfg.Store, cfg.Logger, wcm, cfg.WatchCacheCapacity),
	}
	s.nodeRestriction = newNodeRestriction(cfg)
	if s.admission, err = newAdmission(s, cfg); err != nil {
		return nil, err
	}
	s.attachStores()
	return s, nil
}

// attachStores gives every resource of s's registry the store that writes
// its kind through s's storage and admission.
func (s *Server) attachStores() {
	for _, res := range s.reg.Resources() {
		res.store = store.New(store.Config{Resource: &res.Resource, Strategy: res.Strategy, Subresources: res.subresources,
			Storage: s.cfg.Store, Admission: s.admission, Now: s.now})
	}
}

// publicPaths are served without credentials, exactly what kube's
// system:public-info-viewer role allows. The single checks under /healthz/,
// /livez/ and /readyz/ are not among them: kube grants those to
// system:monitoring only.
var publicPaths = []string{"/healthz", "/livez", "/readyz", "/version", "/version/"}

// Handler returns the full handler chain, in kube-apiserver's order
// (DefaultBuildHandlerChain): the request metrics see every answer, the
// request deadline covers authentication, and max-in-flight counts only
// authenticated requests, so a flood of bad credentials gets 401s without
// taking slots; authorization comes last, on the user impersonation
// leaves, inside max-in-flight. The per-user limits of lists and watches
// (filters.WithUserLimits) count the user impersonation leaves. The
// filters are internal/apiserver/filters; they read a request as route
// does (requestInfoResolver).
func (s *Server) Handler() http.Handler {
	var info requestInfoResolver
	var h http.Handler = http.HandlerFunc(s.route)
	if s.cfg.Authenticator != nil && s.cfg.Authorizer != nil {
		h = authz.Filter(s.cfg.Authorizer, func(w http.ResponseWriter, r *http.Request, err error) {
			writeErrorNegotiated(w, r, s.log, err)
		}, s.log, h)
	}
	h = filters.WithMaxInFlight(h, s.inflight, info)
	// Outside max-in-flight: a list waiting in its user's queue holds no
	// in-flight slot, as a request queued by APF holds no seat.
	h = filters.WithUserLimits(h, s.perUser, info)
	if s.cfg.Authenticator != nil {
		mayImpersonate := authn.AuthenticatedMayImpersonate
		if s.cfg.Authorizer != nil {
			mayImpersonate = authz.Impersonation(s.cfg.Authorizer)
		}
		// Impersonation acts on the authenticated user, so it runs after
		// authentication, as in kube-apiserver.
		h = authn.Impersonation(mayImpersonate, s.log, h)
		h = authn.Middleware(authn.Union(s.cfg.Authenticator, s.tokens), publicPaths, h)
	}
	h = filters.WithRequestDeadline(h, s.limits.RequestTimeout, info)
	return filters.WithRequestMetrics(h, s.metrics, info)
}

// requestInfoResolver gives the filters route's own reading of a request
// (parseResourcePath), in k8s.io/apiserver's RequestInfo, so that what
// they count as a watch, a list or a resource is what the handlers serve
// as one.
type requestInfoResolver struct{}

func (requestInfoResolver) NewRequestInfo(r *http.Request) (*apirequest.RequestInfo, error) {
	info, ok := parseResourcePath(r)
	if !ok {
		return &apirequest.RequestInfo{Path: r.URL.Path, Verb: strings.ToLower(r.Method)}, nil
	}
	return &apirequest.RequestInfo{
		IsResourceRequest: true,
		Path:              r.URL.Path,
		Verb:              info.Verb,
		APIGroup:          info.GV.Group,
		APIVersion:        info.GV.Version,
		Namespace:         info.Namespace,
		Resource:          info.Resource,
		Subresource:       info.Subresource,
		Name:              info.Name,
	}, nil
}

func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if endpoint, check, ok := healthPath(p); ok {
		s.serveHealth(w, r, endpoint, check)
		return
	}
	switch {
	case p == "/version" || p == "/version/":
		writeRawJSON(w, http.StatusOK, versionInfo())
		return
	case p == "/metrics":
		promhttp.HandlerFor(s.gatherer, promhttp.HandlerOpts{}).ServeHTTP(w, r)
		return
	case strings.HasPrefix(p, "/debug/pprof/"):
		// kube-apiserver's --profiling, on by default: Go's profiles, for
		// whom RBAC lets GET the path (cluster-admin; docs/operations.md).
		serveProfiling(w, r)
		return
	case p == "/api" || p == "/api/":
		s.discovery.ServeAPI(w, r)
		return
	case p == "/apis" || p == "/apis/":
		s.discovery.ServeAPIs(w, r)
		return
	case p == "/openapi/v2":
		s.openapi.ServeV2(w, r)
		return
	case p == "/openapi/v3" || p == "/openapi/v3/":
		s.openapi.ServeIndex(w, r)
		return
	case len(p) > len("/openapi/v3/") && p[:len("/openapi/v3/")] == "/openapi/v3/":
		s.openapi.ServeGroupVersion(w, r, p[len("/openapi/v3/"):])
		return
	}
	if k, namespace, ok := reviewFor(p); ok {
		s.serveReview(w, r, k, namespace)
		return
	}
	if e, what, ok := unservedFor(p); ok {
		writeError(w, s.log, errUnserved(e, what))
		return
	}
	parts := splitPath(p)
	switch {
	case len(parts) == 2 && parts[0] == "api":
		s.serveGroupVersion(w, r, schema.GroupVersion{Version: parts[1]})
		return
	case len(parts) == 2 && parts[0] == "apis":
		if s.servesGroup(parts[1]) {
			s.discovery.ServeGroup(w, r, parts[1])
			return
		}
	case len(parts) == 3 && parts[0] == "apis":
		s.serveGroupVersion(w, r, schema.GroupVersion{Group: parts[1], Version: parts[2]})
		return
	}
	info, ok := parseResourcePath(r)
	if !ok {
		writeError(w, s.log, errNotFoundPath())
		return
	}
	s.serveResource(w, r, info)
}

func (s *Server) servesGroup(group string) bool {
	if servesReviewGroup(schema.GroupVersion{Group: group}) {
		return true
	}
	for _, gv := range s.reg.GroupVersions() {
		if gv.Group == group {
			return true
		}
	}
	return false
}

func (s *Server) serveGroupVersion(w http.ResponseWriter, r *http.Request, gv schema.GroupVersion) {
	if servesReviewGroup(gv) {
		s.discovery.ServeGroupVersion(w, r, gv)
		return
	}
	for _, served := range s.reg.GroupVersions() {
		if served == gv {
			s.discovery.ServeGroupVersion(w, r, gv)
			return
		}
	}
	writeError(w, s.log, errNotFoundPath())
}

// versionInfo is what /version reports; kubectl prints it and client-go
// checks the major/minor. apimachinery's version.Info is the type
// kube-apiserver writes there, so the fields come in its order.
func versionInfo() version.Info { return dnsplaneversion.Info() }
