// Package discovery serves the Kubernetes discovery documents of a set of
// resources: /api, /apis, /api/v1, /apis/<group> and
// /apis/<group>/<version> (legacy discovery), and aggregated discovery
// v2 and v2beta1 on /api and /apis when the client asks for it, as kubectl
// and client-go do (docs/apiserver.md, "Discovery and OpenAPI").
package discovery

import (
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apidiscoveryv2beta1 "k8s.io/api/apidiscovery/v2beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubeversion "k8s.io/apimachinery/pkg/version"

	"github.com/dnsplane/dnsplane/api"
	"github.com/dnsplane/dnsplane/internal/negotiation"
)

// Resource is one served resource as discovery announces it.
type Resource struct {
	api.Resource
	// Verbs served on the resource; its subresources' are in
	// KindSubresources.
	Verbs []string
	// KindSubresources describe the names in Subresources: the kind and
	// verbs of each, as the API server takes them from the subresources'
	// declarations (internal/registry/rest.Subresource), the generic
	// status and scale included, so discovery names none.
	KindSubresources []Subresource
}

// Subresource is one subresource: the kind and verbs discovery announces
// for it.
type Subresource struct {
	Name  string
	Kind  schema.GroupVersionKind
	Verbs []string
}

// Discovery serves the discovery documents of a set of resources. It is
// read-only once built.
type Discovery struct {
	resources []Resource
	gvs       []schema.GroupVersion // in order of first appearance
}

// New returns the discovery handlers for resources, which are listed in
// their order (api.Resources': group, then plural). The core group comes
// first when it is first there.
func New(resources []Resource) *Discovery {
	d := &Discovery{resources: slices.Clone(resources)}
	for _, r := range d.resources {
		if gv := r.GVK.GroupVersion(); !slices.Contains(d.gvs, gv) {
			d.gvs = append(d.gvs, gv)
		}
	}
	return d
}

// Media types of aggregated discovery. Clients may list the parameters in
// any order; the response always uses this order.
const (
	aggregatedKind = "APIGroupDiscoveryList"
	// ContentTypeAggregatedV2 is the Content-Type of an aggregated
	// discovery v2 response.
	ContentTypeAggregatedV2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	// ContentTypeAggregatedV2Beta1 is the Content-Type of an aggregated
	// discovery v2beta1 response.
	ContentTypeAggregatedV2Beta1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
)

// subresource is what discovery announces of one subresource of r: its
// response kind and verbs, as kube-apiserver lists them
// (Resource.KindSubresources). ok is false for a name it does not describe.
func subresource(r Resource, name string) (kind schema.GroupVersionKind, verbs []string, ok bool) {
	for _, sub := range r.KindSubresources {
		if sub.Name == name {
			return sub.Kind, sub.Verbs, true
		}
	}
	return schema.GroupVersionKind{}, nil, false
}

// ServeAPI answers GET /api: APIVersions, or the core group as an
// APIGroupDiscoveryList when the client asks for aggregated discovery.
func (d *Discovery) ServeAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Add("Vary", "Accept")
	if version, ok := wantsAggregated(r.Header.Get("Accept")); ok {
		d.writeAggregated(w, version, true)
		return
	}
	// kube-apiserver sends kind but no apiVersion on /api.
	body := metav1.APIVersions{
		TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
		ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{
			{ClientCIDR: "0.0.0.0/0", ServerAddress: r.Host},
		},
	}
	for _, gv := range d.gvs {
		if gv.Group == "" {
			body.Versions = append(body.Versions, gv.Version)
		}
	}
	writeJSON(w, http.StatusOK, "application/json", body)
}

// ServeAPIs answers GET /apis: an APIGroupList of every non-core group, or
// an APIGroupDiscoveryList when the client asks for aggregated discovery.
func (d *Discovery) ServeAPIs(w http.ResponseWriter, r *http.Request) {
	w.Header().Add("Vary", "Accept")
	if version, ok := wantsAggregated(r.Header.Get("Accept")); ok {
		d.writeAggregated(w, version, false)
		return
	}
	list := metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{}}
	for _, group := range d.groups() {
		g, _ := d.apiGroup(group)
		list.Groups = append(list.Groups, g)
	}
	writeJSON(w, http.StatusOK, "application/json", list)
}

// ServeGroup answers GET /apis/<group> with the group's APIGroup, or 404.
func (d *Discovery) ServeGroup(w http.ResponseWriter, r *http.Request, group string) {
	g, ok := d.apiGroup(group)
	if group == "" || !ok {
		notFound(w)
		return
	}
	g.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
	writeJSON(w, http.StatusOK, "application/json", g)
}

// ServeGroupVersion answers GET /api/v1 and GET /apis/<group>/<version> with
// the APIResourceList of that group/version, or 404.
func (d *Discovery) ServeGroupVersion(w http.ResponseWriter, r *http.Request, gv schema.GroupVersion) {
	list, ok := d.resourceList(gv)
	if !ok {
		notFound(w)
		return
	}
	writeJSON(w, http.StatusOK, "application/json", list)
}

// groups returns the served non-core groups in the resources' order.
func (d *Discovery) groups() []string {
	var out []string
	seen := map[string]bool{}
	for _, gv := range d.gvs {
		if gv.Group != "" && !seen[gv.Group] {
			seen[gv.Group] = true
			out = append(out, gv.Group)
		}
	}
	return out
}

// versions returns the served versions of group, preferred first, in
// kube's order (GA before beta before alpha, higher first: autoscaling's
// v2 before v1), which is what kube-apiserver's version priorities give
// for every group dnsplane serves.
func (d *Discovery) versions(group string) []string {
	var out []string
	for _, gv := range d.gvs {
		if gv.Group == group {
			out = append(out, gv.Version)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return kubeversion.CompareKubeAwareVersionStrings(out[i], out[j]) > 0 })
	return out
}

// apiGroup describes one non-core group, without TypeMeta.
func (d *Discovery) apiGroup(group string) (metav1.APIGroup, bool) {
	versions := d.versions(group)
	if len(versions) == 0 {
		return metav1.APIGroup{}, false
	}
	g := metav1.APIGroup{Name: group}
	for _, v := range versions {
		g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{
			GroupVersion: schema.GroupVersion{Group: group, Version: v}.String(),
			Version:      v,
		})
	}
	g.PreferredVersion = g.Versions[0]
	return g, true
}

// resourcesOf returns the resources in gv, ordered by plural.
func (d *Discovery) resourcesOf(gv schema.GroupVersion) []Resource {
	var out []Resource
	for _, r := range d.resources {
		if r.GVK.GroupVersion() == gv {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Plural < out[j].Plural })
	return out
}

// resourceList is the legacy APIResourceList of gv.
func (d *Discovery) resourceList(gv schema.GroupVersion) (metav1.APIResourceList, bool) {
	rs := d.resourcesOf(gv)
	if len(rs) == 0 {
		return metav1.APIResourceList{}, false
	}
	list := metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList"}, GroupVersion: gv.String()}
	if gv.Group != "" {
		// The legacy /api/v1 list has no apiVersion in kube-apiserver;
		// group lists carry "v1".
		list.APIVersion = "v1"
	}
	for _, r := range rs {
		list.APIResources = append(list.APIResources, metav1.APIResource{
			Name:         r.Plural,
			SingularName: r.Singular,
			Namespaced:   r.Namespaced,
			Kind:         r.GVK.Kind,
			Verbs:        slices.Clone(r.Verbs),
			ShortNames:   slices.Clone(r.ShortNames),
			Categories:   slices.Clone(r.Categories),
		})
		for _, name := range r.Subresources {
			gvk, verbs, ok := subresource(r, name)
			if !ok {
				continue
			}
			sub := metav1.APIResource{
				Name:       r.Plural + "/" + name,
				Namespaced: r.Namespaced,
				Kind:       gvk.Kind,
				Verbs:      slices.Clone(verbs),
			}
			if gvk.GroupVersion() != r.GVK.GroupVersion() {
				// Legacy discovery names the group and version of a
				// subresource only when they differ from the parent's.
				sub.Group, sub.Version = gvk.Group, gvk.Version
			}
			list.APIResources = append(list.APIResources, sub)
		}
	}
	sort.SliceStable(list.APIResources, func(i, j int) bool {
		return list.APIResources[i].Name < list.APIResources[j].Name
	})
	return list, true
}

// aggregated builds the APIGroupDiscoveryList of the core group (legacy) or
// of every other group.
func (d *Discovery) aggregated(legacy bool) apidiscoveryv2.APIGroupDiscoveryList {
	list := apidiscoveryv2.APIGroupDiscoveryList{Items: []apidiscoveryv2.APIGroupDiscovery{}}
	groups := d.groups()
	if legacy {
		groups = []string{""}
	}
	for _, group := range groups {
		item := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: group}}
		for _, v := range d.versions(group) {
			gv := schema.GroupVersion{Group: group, Version: v}
			version := apidiscoveryv2.APIVersionDiscovery{Version: v, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent}
			for _, r := range d.resourcesOf(gv) {
				version.Resources = append(version.Resources, aggregatedResource(r))
			}
			item.Versions = append(item.Versions, version)
		}
		if len(item.Versions) > 0 {
			list.Items = append(list.Items, item)
		}
	}
	return list
}

func aggregatedResource(r Resource) apidiscoveryv2.APIResourceDiscovery {
	kind := metav1.GroupVersionKind{Group: r.GVK.Group, Version: r.GVK.Version, Kind: r.GVK.Kind}
	scope := apidiscoveryv2.ScopeCluster
	if r.Namespaced {
		scope = apidiscoveryv2.ScopeNamespace
	}
	out := apidiscoveryv2.APIResourceDiscovery{
		Resource:         r.Plural,
		ResponseKind:     &kind,
		Scope:            scope,
		SingularResource: r.Singular,
		Verbs:            slices.Clone(r.Verbs),
		ShortNames:       slices.Clone(r.ShortNames),
		Categories:       slices.Clone(r.Categories),
	}
	for _, name := range r.Subresources {
		gvk, verbs, ok := subresource(r, name)
		if !ok {
			continue
		}
		sk := metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind}
		out.Subresources = append(out.Subresources, apidiscoveryv2.APISubresourceDiscovery{
			Subresource:  name,
			ResponseKind: &sk,
			Verbs:        slices.Clone(verbs),
		})
	}
	// Ordered by name, as kube-apiserver lists them.
	slices.SortFunc(out.Subresources, func(a, b apidiscoveryv2.APISubresourceDiscovery) int {
		return strings.Compare(a.Subresource, b.Subresource)
	})
	return out
}

// writeAggregated writes the aggregated document in the negotiated version.
// v2beta1 has the same JSON shape as v2, so only apiVersion and the
// Content-Type differ.
func (d *Discovery) writeAggregated(w http.ResponseWriter, version string, legacy bool) {
	list := d.aggregated(legacy)
	contentType := ContentTypeAggregatedV2
	gv := apidiscoveryv2.SchemeGroupVersion
	if version == apidiscoveryv2beta1.SchemeGroupVersion.Version {
		contentType = ContentTypeAggregatedV2Beta1
		gv = apidiscoveryv2beta1.SchemeGroupVersion
	}
	list.TypeMeta = metav1.TypeMeta{Kind: aggregatedKind, APIVersion: gv.String()}
	writeJSON(w, http.StatusOK, contentType, list)
}

// wantsAggregated negotiates the Accept header of /api and /apis.
// It returns the aggregated discovery version ("v2" or "v2beta1") when the
// most preferred acceptable media range is aggregated discovery, and false
// when plain JSON (or nothing we know) wins.
func wantsAggregated(accept string) (string, bool) {
	r, ok := negotiation.PreferredKind(accept, func(r negotiation.Range) bool {
		if !r.JSONAs("apidiscovery.k8s.io", aggregatedKind) {
			return false
		}
		// profile=nopeer asks to leave out peer servers; there are none.
		if p, ok := r.Params["profile"]; ok && p != "nopeer" {
			return false
		}
		v := r.Params["v"]
		return v == "v2" || v == "v2beta1"
	})
	return r.Params["v"], ok
}

// writeJSON writes v as JSON with the given status and Content-Type. The
// body ends with a newline as kube-apiserver's discovery documents do: it
// writes them (and its 404 Status) with responsewriters.WriteObjectNegotiated
// (k8s.io/apiserver/pkg/endpoints/discovery, aggregated/handler.go), whose
// JSON serializer encodes with json.Encoder.
func writeJSON(w http.ResponseWriter, code int, contentType string, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	body = append(body, '\n')
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// notFound writes the 404 Status kube-apiserver sends for an unknown
// path.
func notFound(w http.ResponseWriter) {
	status := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Message:  "the server could not find the requested resource",
		Reason:   metav1.StatusReasonNotFound,
		Details:  &metav1.StatusDetails{},
		Code:     http.StatusNotFound,
	}
	writeJSON(w, http.StatusNotFound, "application/json", status)
}
