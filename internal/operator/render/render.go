// Package render turns a DNS resource's spec into the Corefile of the
// cluster DNS: one server block per forward plugin, then the "." block
// with the cluster domain, autopath expansion and the upstream resolvers.
// It is pure (no client-go, no CoreDNS): the operator calls it on every
// reconcile, and `dnsplane corefile` offline.
//
// The blocks are built with internal/corefile's cluster DNS model, the one
// `dnsplane up` uses, so the "." block has the same shape in both. The
// same spec always renders to the same bytes, so the operator can compare
// renderings to decide whether anything changed.
//
// Parts of the spec that break the rules of internal/operator/dnsspec (a
// DNS stored before validation existed) are left out and reported as
// Skipped: an invalid forward plugin is not rendered, invalid upstream
// resolvers, cache or log level fall back to their defaults. The rest of
// the cluster DNS keeps working, and the operator names what it skipped
// in the Degraded condition. docs/dns-operator.md describes the output.
package render

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/corefile"
	"github.com/dnsplane/dnsplane/internal/operator/dnsspec"
)

// Options are what the Corefile depends on besides the spec. The zero
// value renders the Corefile of the cluster DNS DaemonSet's pods.
type Options struct {
	// ClusterDomain is the cluster domain; empty means cluster.local.
	ClusterDomain string
	// Listen is where every server block listens: :PORT on every address
	// or ADDR:PORT; empty means ":5353" (the pods listen unprivileged and
	// the Service maps port 53 to it, as OpenShift's do).
	Listen string
	// Kubeconfig is the kubeconfig the kubernetes plugin reads the API
	// with; empty means the service account of the pod CoreDNS runs in.
	Kubeconfig string
	// CABundleDir is where the cluster DNS sees the CA bundles TLS
	// forwarders name (caBundle): <CABundleDir>/ca-<name>.crt, the key
	// the operator copies each bundle to in its ConfigMap
	// (CABundleFile). Empty means DefaultCABundleDir, where the
	// DaemonSet's pods mount that ConfigMap.
	CABundleDir string
	// CABundles, when not nil, are the CA bundles the operator found, by
	// ConfigMap name (the PEM text of its ca-bundle.crt key). A TLS
	// forwarder naming a bundle not in it is left out (Skipped), and the
	// Corefile starts with a comment line per bundle it uses, with the
	// bundle's sha256: CoreDNS reads a CA file only at setup, so a
	// changed bundle must change the Corefile to be reloaded. Nil renders
	// the paths unchecked (`dnsplane corefile`).
	CABundles map[string]string
	// Health, Ready and Metrics are the health, readiness and Prometheus
	// endpoints; empty means ":8080", ":8181" and ":9153", CoreDNS's
	// defaults.
	Health, Ready, Metrics string
	// OptionCode is the EDNS0 search list option code; 0 means 65534.
	OptionCode uint16
	// Trusted are the prefixes searchexpand accepts the search list option
	// from; empty accepts it from any client (corefile.ClusterDNSOptions).
	Trusted []string
	// NoLoop leaves the loop plugin out, for a process that also runs
	// other roles (`dnsplane up`): the plugin exits the process when it
	// finds a forwarding loop.
	NoLoop bool
	// InProcess renders for dnsplane's in-process cluster DNS (`dnsplane
	// up`), which shares the process with other roles: no health, ready
	// or metrics endpoints (their default ports belong to the host), no
	// reload plugin (the runtime applies ConfigMap changes itself,
	// internal/coredns) and no loop plugin (see NoLoop).
	InProcess bool
	// SystemResolvers are the nameservers a SystemResolvConf upstream
	// stands for; empty means /etc/resolv.conf as the forward plugin reads
	// it. `dnsplane up` sets its --upstream resolvers.
	SystemResolvers []string
	// OwnAddresses are where this cluster's DNS serves: the cluster DNS
	// Service's IP on port 53, and in `dnsplane up` the cluster DNS's and
	// node cache's listen addresses. A forward plugin or upstream
	// resolvers naming one are left out (Skipped): forwarding there is a
	// loop (dnsspec.ValidateNotOwn).
	OwnAddresses []netip.AddrPort
	// HostSearch is the node's host search list for searchexpand's
	// host_search (corefile.ClusterDNSOptions.HostSearch); `up` knows it,
	// a DaemonSet's pods do not.
	HostSearch []string
	// Offline renders for a dry load outside the cluster
	// (coredns.DryLoad from `dnsplane corefile`): the two things only a
	// cluster DNS pod has are replaced. Without a Kubeconfig the
	// kubernetes plugin reads https://kubernetes.default.svc without
	// credentials instead of the pod's service account (it connects only
	// when serving), and TLS forwarders trust the system's certificate
	// authorities instead of their mounted CA bundle.
	Offline bool
	// NoServiceAccount renders, for a dry load, the kubernetes plugin's
	// in-cluster connection (no Kubeconfig: the pod's service account)
	// as an endpoint of the same API server, https://kubernetes.default.svc,
	// and nothing else differently. The plugin's setup reads the service
	// account's token file (rest.InClusterConfig) and connects only when
	// serving, so a dry load where the operator runs (any process but a
	// cluster DNS pod) would otherwise fail on the environment, not the
	// Corefile. Offline implies it.
	NoServiceAccount bool
}

// DefaultCABundleDir is where the DaemonSet's pods mount the operator's
// ConfigMap, with the Corefile and the CA bundles.
const DefaultCABundleDir = "/etc/dnsplane/corefile"

// CABundleFile is the ConfigMap key, and the file name in CABundleDir,
// of the CA bundle of ConfigMap name.
func CABundleFile(name string) string { return "ca-" + name + ".crt" }

// CABundleKey is the ConfigMap key that holds a CA bundle, as in
// OpenShift.
const CABundleKey = "ca-bundle.crt"

// The cache TTLs when the spec sets none: the cluster DNS of `dnsplane up`
// caches for 30s, and negative answers are capped at 30s whatever the
// positive TTL (OpenShift Bug 1943578: NXDOMAIN cached for 900s).
const (
	DefaultPositiveTTL = 30 * time.Second
	DefaultNegativeTTL = 30 * time.Second
)

// offlineAPIServer is the API server a dry load's kubernetes plugin is
// pointed at: the in-cluster name of the API, never contacted.
const offlineAPIServer = "https://kubernetes.default.svc:443"

// Skipped is a part of the spec left out of the Corefile because it is
// invalid.
type Skipped struct {
	// Path is the field path of what was left out, such as
	// spec.pluginConfig.forwardPlugins[1].
	Path string
	// Errors are why, as the API server would have refused it.
	Errors field.ErrorList
}

func (s Skipped) String() string {
	return fmt.Sprintf("%s left out: %v", s.Path, s.Errors.ToAggregate())
}

// Corefile renders spec. It returns what it left out, and an error only
// when o cannot be rendered (a bad listen address, cluster domain or
// endpoint): the spec's own problems are skipped, never fatal.
func Corefile(spec *operatorv1.DNSSpec, o Options) ([]byte, []Skipped, error) {
	d := dnsspec.Defaulted(*spec)
	cd := dnsspec.ClusterDomain(o.ClusterDomain)
	var skipped []Skipped
	skip := func(path *field.Path, errs field.ErrorList) {
		skipped = append(skipped, Skipped{Path: path.String(), Errors: errs})
	}
	specPath := field.NewPath("spec")

	stubs, ur, upstreams := forwarding(d, cd, o, skip)

	positive, negative := DefaultPositiveTTL, DefaultNegativeTTL
	if errs := dnsspec.ValidateCache(d.Cache, specPath.Child("cache")); len(errs) > 0 {
		skip(specPath.Child("cache"), errs)
	} else if d.Cache != nil {
		if d.Cache.PositiveTTL != nil {
			positive = d.Cache.PositiveTTL.Duration
		}
		if d.Cache.NegativeTTL != nil {
			negative = d.Cache.NegativeTTL.Duration
		}
	}

	level := d.LogLevel
	if errs := dnsspec.ValidateLogLevel(level, specPath.Child("logLevel")); len(errs) > 0 {
		skip(specPath.Child("logLevel"), errs)
		level = dnsspec.DefaultLogLevel
	}

	c := corefile.ClusterDNSOptions{
		Listen:        orDefault(o.Listen, ":5353"),
		ClusterDomain: cd,
		OptionCode:    o.OptionCode,
		Kubeconfig:    o.Kubeconfig,
		InCluster:     o.Kubeconfig == "" && !o.Offline && !o.NoServiceAccount,
		Upstreams:     upstreams,
		Forward:       forwardOptions(ur.Policy, ur.TransportConfig, ur.ProtocolStrategy, o),
		Stubs:         stubs,
		Trusted:       o.Trusted,
		HostSearch:    o.HostSearch,
		// Whole seconds, fractions dropped (the API documents it); the
		// rules keep both at 1s or more.
		CacheTTL:   int(positive / time.Second),
		DenialTTL:  int(negative / time.Second),
		Health:     orDefault(o.Health, ":8080"),
		Ready:      orDefault(o.Ready, ":8181"),
		Metrics:    orDefault(o.Metrics, ":9153"),
		LogClasses: logClasses(level),
		Reload:     true,
		Loop:       !o.NoLoop,
	}
	if o.Kubeconfig == "" && (o.Offline || o.NoServiceAccount) {
		c.Endpoint = offlineAPIServer
	}
	if o.InProcess {
		c.Health, c.Ready, c.Metrics = o.Health, o.Ready, o.Metrics
		c.Reload, c.Loop = false, false
	}
	text, err := corefile.ClusterDNS(c)
	if err != nil {
		return nil, skipped, fmt.Errorf("rendering the Corefile: %w", err)
	}
	if o.CABundles != nil && !o.Offline {
		text = caBundleComments(stubs, c.Forward, o) + text
	}
	return []byte(text), skipped, nil
}

// forwarding is what the Corefile forwards: the valid forward plugins as
// stub domains, and the upstream resolvers (the defaults when invalid)
// with the forward plugin's upstreams they stand for. skip is told what
// is left out.
func forwarding(d operatorv1.DNSSpec, cd string, o Options, skip func(*field.Path, field.ErrorList)) ([]corefile.StubDomain, operatorv1.UpstreamResolvers, []string) {
	specPath := field.NewPath("spec")
	var stubs []corefile.StubDomain
	fps := d.PluginConfig.ForwardPlugins
	fpPath := specPath.Child("pluginConfig", "forwardPlugins")
	for i, fp := range fps {
		if errs := dnsspec.ValidateForwardPluginAt(fps, i, cd, fpPath); len(errs) > 0 {
			skip(fpPath.Index(i), errs)
			continue
		}
		if errs := dnsspec.ValidateForwardPluginNotOwn(&fps[i], o.OwnAddresses, fpPath.Index(i)); len(errs) > 0 {
			skip(fpPath.Index(i), errs)
			continue
		}
		if errs := checkCABundle(fp.TransportConfig, fpPath.Index(i), o); len(errs) > 0 {
			skip(fpPath.Index(i), errs)
			continue
		}
		stubs = append(stubs, corefile.StubDomain{
			Domain:    fp.Domain,
			Upstreams: fp.NameServers,
			Forward:   forwardOptions(fp.Policy, fp.TransportConfig, fp.ProtocolStrategy, o),
		})
	}

	ur := d.UpstreamResolvers
	urPath := specPath.Child("upstreamResolvers")
	errs := dnsspec.ValidateUpstreamResolvers(&ur, urPath)
	if len(errs) == 0 {
		errs = dnsspec.ValidateUpstreamResolversNotOwn(&ur, o.OwnAddresses, urPath)
	}
	if len(errs) == 0 {
		errs = checkCABundle(ur.TransportConfig, urPath, o)
	}
	if len(errs) > 0 {
		skip(urPath, errs)
		ur = dnsspec.DefaultedUpstreamResolvers(operatorv1.UpstreamResolvers{})
	}
	upstreams := make([]string, 0, len(ur.Upstreams))
	for _, u := range ur.Upstreams {
		if u.Type == operatorv1.SystemResolvConfType && len(o.SystemResolvers) > 0 {
			upstreams = append(upstreams, o.SystemResolvers...)
			continue
		}
		upstreams = append(upstreams, upstream(u))
	}
	return stubs, ur, upstreams
}

// checkCABundle requires the CA bundle a TLS transport names to be among
// o.CABundles, when the operator gave them.
func checkCABundle(tc *operatorv1.DNSTransportConfig, path *field.Path, o Options) field.ErrorList {
	if o.CABundles == nil || o.Offline || !dnsspec.IsTLS(tc) || tc.TLS.CABundle == nil {
		return nil
	}
	name := tc.TLS.CABundle.Name
	if _, ok := o.CABundles[name]; ok {
		return nil
	}
	return field.ErrorList{field.NotFound(path.Child("transportConfig", "tls", "caBundle", "name"),
		fmt.Sprintf("%s: no ConfigMap %s with key %s in the operator's namespace", name, name, CABundleKey))}
}

// caBundleComments are the Corefile's first lines: the sha256 of each CA
// bundle its TLS forwarders read, so that a changed bundle changes the
// Corefile (CoreDNS reads the file at setup only).
func caBundleComments(stubs []corefile.StubDomain, ur corefile.ForwardOptions, o Options) string {
	used := map[string]bool{}
	for _, f := range append([]corefile.ForwardOptions{ur}, stubForwards(stubs)...) {
		if f.TLSCAFile != "" {
			used[strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f.TLSCAFile), "ca-"), ".crt")] = true
		}
	}
	names := make([]string, 0, len(used))
	for n := range used {
		if _, ok := o.CABundles[n]; ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		sum := sha256.Sum256([]byte(o.CABundles[n]))
		fmt.Fprintf(&b, "# ca-bundle %s sha256:%s\n", n, hex.EncodeToString(sum[:]))
	}
	return b.String()
}

func stubForwards(stubs []corefile.StubDomain) []corefile.ForwardOptions {
	out := make([]corefile.ForwardOptions, len(stubs))
	for i, s := range stubs {
		out[i] = s.Forward
	}
	return out
}

// SharedReverseZones are notes on the forward plugins rendered for
// Corefile(spec, o) whose domain is, is under or is above a reverse zone
// (in-addr.arpa, 10.in-addr.arpa, arpa): their block answers the PTR names
// of Service and pod IPs from the cluster first
// (corefile.ReverseZones) and forwards only the rest, so the cluster's
// reverse names keep working. The operator records them as events.
func SharedReverseZones(spec *operatorv1.DNSSpec, o Options) []string {
	d := dnsspec.Defaulted(*spec)
	stubs, _, _ := forwarding(d, dnsspec.ClusterDomain(o.ClusterDomain), o, func(*field.Path, field.ErrorList) {})
	var out []string
	for _, s := range stubs {
		if rz := corefile.ReverseZones(s.Domain); len(rz) > 0 {
			out = append(out, fmt.Sprintf("forward plugin %s: the cluster DNS answers the PTR names of Service and pod IPs in %s itself "+
				"and forwards the other names", s.Domain, strings.Join(rz, " and ")))
		}
	}
	return out
}

// Forwarder is a domain the Corefile forwards and its nameservers.
type Forwarder struct {
	// Domain is the forwarded domain, "." for the upstream resolvers.
	Domain string
	// Addresses are the nameservers as CoreDNS's forward metrics name
	// them (the "to" label): IP:PORT, [IPv6]:PORT, the transport's
	// port when the spec gives none.
	Addresses []string
	// ResolvConf is true when the domain also forwards to the nameservers
	// of a resolv.conf the operator cannot read (a SystemResolvConf
	// upstream without Options.SystemResolvers): the cluster DNS's
	// metrics name them.
	ResolvConf bool
}

// Forwarders are the domains the Corefile Corefile(spec, o) renders
// forwards, with their nameservers: the valid forward plugins in spec
// order, then ".".
func Forwarders(spec *operatorv1.DNSSpec, o Options) []Forwarder {
	d := dnsspec.Defaulted(*spec)
	stubs, ur, upstreams := forwarding(d, dnsspec.ClusterDomain(o.ClusterDomain), o, func(*field.Path, field.ErrorList) {})
	out := make([]Forwarder, 0, len(stubs)+1)
	for _, s := range stubs {
		out = append(out, forwarder(s.Domain, s.Upstreams, s.Forward.TLS))
	}
	return append(out, forwarder(".", upstreams, dnsspec.IsTLS(ur.TransportConfig)))
}

func forwarder(domain string, upstreams []string, tls bool) Forwarder {
	f := Forwarder{Domain: domain}
	port := uint16(53)
	if tls {
		port = 853
	}
	for _, u := range upstreams {
		if u == corefile.ResolvConf {
			f.ResolvConf = true
			continue
		}
		if ap, err := netip.ParseAddrPort(u); err == nil {
			f.Addresses = append(f.Addresses, ap.String())
		} else if a, err := netip.ParseAddr(strings.Trim(u, "[]")); err == nil {
			f.Addresses = append(f.Addresses, netip.AddrPortFrom(a, port).String())
		}
	}
	return f
}

// forwardOptions maps a forwarder's policy, transport and protocol to the
// forward plugin's options.
func forwardOptions(policy operatorv1.ForwardPolicy, tc *operatorv1.DNSTransportConfig, ps operatorv1.ProtocolStrategy, o Options) corefile.ForwardOptions {
	f := corefile.ForwardOptions{
		Policy:   corefilePolicy(policy),
		ForceTCP: ps == operatorv1.ProtocolStrategyTCP,
	}
	if dnsspec.IsTLS(tc) {
		f.TLS = true
		f.TLSServerName = tc.TLS.ServerName
		if ca := tc.TLS.CABundle; ca != nil && !o.Offline {
			f.TLSCAFile = filepath.Join(orDefault(o.CABundleDir, DefaultCABundleDir), CABundleFile(ca.Name))
		}
	}
	return f
}

// corefilePolicy maps the API's policies to the forward plugin's; the
// rules admit no other value once defaulted.
func corefilePolicy(p operatorv1.ForwardPolicy) string {
	switch p {
	case operatorv1.ForwardPolicyRoundRobin:
		return "round_robin"
	case operatorv1.ForwardPolicySequential:
		return "sequential"
	default:
		return "random"
	}
}

// upstream is an upstream resolver as the forward plugin takes it.
func upstream(u operatorv1.Upstream) string {
	if u.Type == operatorv1.SystemResolvConfType {
		return corefile.ResolvConf
	}
	if u.Port == 0 {
		return u.Address // the transport's port: corefile adds 53 or 853
	}
	return net.JoinHostPort(u.Address, strconv.Itoa(int(u.Port)))
}

// logClasses are the log plugin's classes for a log level, as OpenShift
// maps them: Normal logs the answers that are errors, Debug also
// negative answers, Trace everything.
func logClasses(l operatorv1.DNSLogLevel) []string {
	switch l {
	case operatorv1.DNSLogLevelDebug:
		return []string{"denial", "error"}
	case operatorv1.DNSLogLevelTrace:
		return []string{"all"}
	default:
		return []string{"error"}
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
