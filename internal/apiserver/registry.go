package apiserver

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/dnsplane/dnsplane/api"
	"github.com/dnsplane/dnsplane/internal/apiserver/store"
	"github.com/dnsplane/dnsplane/internal/registry"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
)

// Resource is one row of api.Resources as the server serves it.
type Resource struct {
	api.Resource
	// Verbs served; every resource serves the full set today.
	Verbs []string
	// Strategy holds the kind's rules (internal/registry).
	Strategy rest.Strategy
	// store writes the kind's objects; nil in a registry no Server serves
	// (NewRegistry).
	store *store.Store
	// subresources declare every subresource the kind serves: the generic
	// ones its row names (rest.Generic) and its package's own
	// (subresource.go); their names are also in Subresources.
	subresources []rest.Subresource
}

// HasStatus reports a status subresource: the main resource then ignores
// status changes and /status ignores the rest.
func (r *Resource) HasStatus() bool { return rest.HasStatus(r.subresources) }

// subresource returns the declaration of the subresource name.
func (r *Resource) subresource(name string) (rest.Subresource, bool) {
	return rest.Find(r.subresources, name)
}

// objectSubresource returns the declaration of the subresource name when
// it reads and writes the object whole under a strategy of its own
// (rest.Subresource.Update: status, finalize, approval).
func (r *Resource) objectSubresource(name string) (rest.Subresource, bool) {
	sub, ok := r.subresource(name)
	return sub, ok && sub.Update != nil
}

// GroupVersion of the resource.
func (r *Resource) GroupVersion() schema.GroupVersion { return r.GVK.GroupVersion() }

var allVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// Registry is the set of resources, looked up by group/version/plural.
type Registry struct {
	byPath map[schema.GroupVersionResource]*Resource
	list   []*Resource
	// aliases are the older resources that are a subresource in all but
	// the URL (rest.Subresource.Alias), by their group/version/plural.
	aliases map[schema.GroupVersionResource]alias
}

// alias is a subresource served under an older resource's URL.
type alias struct {
	parent *Resource
	sub    rest.Subresource
}

// NewRegistry returns the resources dnsplane serves with the strategies of
// offline validation (no cluster IPs): for code that
// needs the resources' shape, not a server's writes.
func NewRegistry() *Registry {
	reg, err := newRegistry(registry.Strategies(registry.Config{}))
	if err != nil {
		panic(err) // internal/registry's test keeps the two tables in step
	}
	return reg
}

// newRegistry returns the resources dnsplane serves, api.Resources in its
// order (group, then plural), each with its strategy.
func newRegistry(strategies map[schema.GroupKind]rest.Strategy) (*Registry, error) {
	reg := &Registry{byPath: map[schema.GroupVersionResource]*Resource{}, aliases: map[schema.GroupVersionResource]alias{}}
	for _, r := range api.Resources() {
		st, ok := strategies[r.GVK.GroupKind()]
		if !ok {
			return nil, fmt.Errorf("apiserver: no strategy for %s", r.GVK.GroupKind())
		}
		subs, err := declaredSubresources(r, st)
		if err != nil {
			return nil, err
		}
		res := &Resource{Resource: r, Verbs: allVerbs, Strategy: st, subresources: subs}
		// Routing, discovery and OpenAPI see the kind's own subresources
		// beside the row's generic ones.
		res.Subresources = nil
		for _, sub := range subs {
			res.Subresources = append(res.Subresources, sub.Name)
			if sub.Alias != "" {
				reg.aliases[r.GVK.GroupVersion().WithResource(sub.Alias)] = alias{parent: res, sub: sub}
			}
		}
		reg.byPath[r.GroupVersionResource()] = res
		reg.list = append(reg.list, res)
	}
	for gvr := range reg.aliases {
		if _, ok := reg.byPath[gvr]; ok {
			return nil, fmt.Errorf("apiserver: the alias %s is also a resource", gvr)
		}
	}
	return reg, nil
}

// Lookup returns the resource served at group/version/plural.
func (reg *Registry) Lookup(gvr schema.GroupVersionResource) (*Resource, bool) {
	r, ok := reg.byPath[gvr]
	return r, ok
}

// ByKind returns the resource whose objects have the given kind.
func (reg *Registry) ByKind(gvk schema.GroupVersionKind) (*Resource, bool) {
	for _, r := range reg.list {
		if r.GVK == gvk {
			return r, true
		}
	}
	return nil, false
}

// Resources returns every resource, ordered by group then plural.
func (reg *Registry) Resources() []*Resource { return reg.list }

// GroupVersions returns every served group/version, the core group first.
func (reg *Registry) GroupVersions() []schema.GroupVersion {
	seen := map[schema.GroupVersion]bool{}
	var out []schema.GroupVersion
	for _, r := range reg.list {
		if gv := r.GroupVersion(); !seen[gv] {
			seen[gv] = true
			out = append(out, gv)
		}
	}
	return out
}

// strategies maps every served kind to its strategy.
func (reg *Registry) strategies() map[schema.GroupKind]rest.Strategy {
	m := make(map[schema.GroupKind]rest.Strategy, len(reg.list))
	for _, r := range reg.list {
		m[r.GVK.GroupKind()] = r.Strategy
	}
	return m
}
