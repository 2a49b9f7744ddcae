package apiserver

import (
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/dnsplane/dnsplane/api"
)

// Resource describes one REST resource the server serves. The table is the
// single source for routing, discovery, storage keys and printing.
type Resource struct {
	GVK        schema.GroupVersionKind
	Plural     string // URL segment and storage key prefix, e.g. "pods"
	Singular   string
	Namespaced bool
	ShortNames []string
	Categories []string
	// Status is true when the resource has a status subresource: the main
	// resource then ignores status changes and /status ignores the rest.
	Status bool
	// Verbs served; every resource serves the full set today.
	Verbs []string
}

// GroupResource is the resource's group and plural, as error messages name it.
func (r *Resource) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: r.GVK.Group, Resource: r.Plural}
}

// GroupVersion of the resource.
func (r *Resource) GroupVersion() schema.GroupVersion { return r.GVK.GroupVersion() }

// APIVersion is the apiVersion string objects of this resource carry.
func (r *Resource) APIVersion() string { return r.GVK.GroupVersion().String() }

// New returns a new empty object of the resource's Go type.
func (r *Resource) New() any {
	obj, ok := api.New(r.GVK)
	if !ok {
		// The registry only lists kinds package api knows; a miss is a bug.
		panic("apiserver: no Go type for " + r.GVK.String())
	}
	return obj
}

var allVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// Registry is the set of resources, looked up by group/version/plural.
type Registry struct {
	byPath map[schema.GroupVersionResource]*Resource
	list   []*Resource
}

// NewRegistry returns the resources dnsplane serves.
func NewRegistry() *Registry {
	core := func(kind, plural string, namespaced bool, short []string, status bool, cats ...string) *Resource {
		return &Resource{GVK: schema.GroupVersionKind{Version: "v1", Kind: kind}, Plural: plural, Namespaced: namespaced, ShortNames: short, Status: status, Categories: cats}
	}
	grp := func(group, kind, plural string, namespaced bool, short []string, status bool, cats ...string) *Resource {
		return &Resource{GVK: schema.GroupVersionKind{Group: group, Version: "v1", Kind: kind}, Plural: plural, Namespaced: namespaced, ShortNames: short, Status: status, Categories: cats}
	}
	rs := []*Resource{
		core("Namespace", "namespaces", false, []string{"ns"}, true),
		core("Pod", "pods", true, []string{"po"}, true, "all"),
		core("Service", "services", true, []string{"svc"}, true, "all"),
		core("Endpoints", "endpoints", true, []string{"ep"}, false),
		core("ConfigMap", "configmaps", true, []string{"cm"}, false),
		core("Secret", "secrets", true, nil, false),
		core("Node", "nodes", false, []string{"no"}, true),
		core("Event", "events", true, []string{"ev"}, false),
		core("PodTemplate", "podtemplates", true, nil, false),
		core("ReplicationController", "replicationcontrollers", true, []string{"rc"}, true, "all"),
		core("ServiceAccount", "serviceaccounts", true, []string{"sa"}, false),
		grp("apps", "Deployment", "deployments", true, []string{"deploy"}, true, "all"),
		grp("apps", "ReplicaSet", "replicasets", true, []string{"rs"}, true, "all"),
		grp("apps", "StatefulSet", "statefulsets", true, []string{"sts"}, true, "all"),
		grp("apps", "DaemonSet", "daemonsets", true, []string{"ds"}, true, "all"),
		grp("batch", "Job", "jobs", true, nil, true, "all"),
		grp("batch", "CronJob", "cronjobs", true, []string{"cj"}, true, "all"),
		grp("discovery.k8s.io", "EndpointSlice", "endpointslices", true, nil, false),
		grp("coordination.k8s.io", "Lease", "leases", true, nil, false),
		grp("operator.dnsplane.io", "DNS", "dnses", false, nil, true),
	}
	reg := &Registry{byPath: map[schema.GroupVersionResource]*Resource{}}
	for _, r := range rs {
		r.Verbs = allVerbs
		r.Singular = strings.ToLower(r.GVK.Kind)
		reg.add(r)
	}
	return reg
}

func (reg *Registry) add(r *Resource) {
	reg.byPath[r.GVK.GroupVersion().WithResource(r.Plural)] = r
	reg.list = append(reg.list, r)
	sort.SliceStable(reg.list, func(i, j int) bool {
		a, b := reg.list[i], reg.list[j]
		if a.GVK.Group != b.GVK.Group {
			return a.GVK.Group < b.GVK.Group
		}
		return a.Plural < b.Plural
	})
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
