package discovery

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubeversion "k8s.io/apimachinery/pkg/version"
	cgdiscovery "k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/dnsplane/dnsplane/api"
	registryrest "github.com/dnsplane/dnsplane/internal/registry/rest"
)

// kubectlDiscoveryAccept is the Accept header kubectl 1.32 sends to /api
// and /apis.
const kubectlDiscoveryAccept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"

// allVerbs are the verbs the API server serves on every resource.
var allVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// served is every row of api.Resources with every verb, as the API server
// serves them.
func served() []Resource {
	var out []Resource
	for _, r := range api.Resources() {
		d := Resource{Resource: r, Verbs: allVerbs}
		// The generic subresources the row names, as the API server
		// declares them (internal/registry/rest.Generic).
		for _, name := range r.Subresources {
			if sub, ok := registryrest.Generic(name, registryrest.Default{}); ok {
				d.KindSubresources = append(d.KindSubresources, Subresource{Name: sub.Name, Kind: sub.KindOf(r.GVK), Verbs: sub.Verbs})
			}
		}
		out = append(out, d)
	}
	return out
}

// versionsOf are the served versions of group, preferred first, as
// kube-apiserver lists them (autoscaling: v2, v1).
func versionsOf(group string) []string {
	var out []string
	for _, r := range served() {
		if r.GVK.Group == group && !slices.Contains(out, r.GVK.Version) {
			out = append(out, r.GVK.Version)
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return -kubeversion.CompareKubeAwareVersionStrings(a, b) })
	return out
}

// lookup finds a served resource by group, version and plural.
func lookup(gvr schema.GroupVersionResource) (Resource, bool) {
	for _, r := range served() {
		if r.GVK.GroupVersion().WithResource(r.Plural) == gvr {
			return r, true
		}
	}
	return Resource{}, false
}

// docsServer serves the discovery handlers of every served resource over
// HTTP and records the paths requested.
type docsServer struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
}

func (s *docsServer) requested() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.paths)
}

func newDocsServer(t *testing.T) *docsServer {
	t.Helper()
	d := New(served())
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api", d.ServeAPI)
	mux.HandleFunc("GET /apis", d.ServeAPIs)
	mux.HandleFunc("GET /api/{v}", func(w http.ResponseWriter, r *http.Request) {
		d.ServeGroupVersion(w, r, schema.GroupVersion{Version: r.PathValue("v")})
	})
	mux.HandleFunc("GET /apis/{g}", func(w http.ResponseWriter, r *http.Request) {
		d.ServeGroup(w, r, r.PathValue("g"))
	})
	mux.HandleFunc("GET /apis/{g}/{v}", func(w http.ResponseWriter, r *http.Request) {
		d.ServeGroupVersion(w, r, schema.GroupVersion{Group: r.PathValue("g"), Version: r.PathValue("v")})
	})
	s := &docsServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.Path)
		s.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// getDoc GETs path with an Accept header and returns the response and body.
func getDoc(t *testing.T, url, accept string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func TestDiscoveryLegacyDocuments(t *testing.T) {
	srv := newDocsServer(t)
	host := strings.TrimPrefix(srv.URL, "http://")

	t.Run("/api", func(t *testing.T) {
		resp, body := getDoc(t, srv.URL+"/api", "application/json")
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type = %q", ct)
		}
		var got map[string]any
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		// kube-apiserver sends kind but no apiVersion here.
		if got["kind"] != "APIVersions" || got["apiVersion"] != nil {
			t.Errorf("type meta = %v/%v", got["kind"], got["apiVersion"])
		}
		var v metav1.APIVersions
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatal(err)
		}
		want := []metav1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: host}}
		if !slices.Equal(v.Versions, []string{"v1"}) || !slices.Equal(v.ServerAddressByClientCIDRs, want) {
			t.Errorf("got %+v", v)
		}
	})

	t.Run("/apis", func(t *testing.T) {
		_, body := getDoc(t, srv.URL+"/apis", "")
		var l metav1.APIGroupList
		if err := json.Unmarshal(body, &l); err != nil {
			t.Fatal(err)
		}
		if l.Kind != "APIGroupList" || l.APIVersion != "v1" {
			t.Errorf("type meta = %+v", l.TypeMeta)
		}
		var names []string
		for _, g := range l.Groups {
			names = append(names, g.Name)
			var gvs []metav1.GroupVersionForDiscovery
			for _, v := range versionsOf(g.Name) {
				gvs = append(gvs, metav1.GroupVersionForDiscovery{GroupVersion: g.Name + "/" + v, Version: v})
			}
			if len(gvs) == 0 || g.PreferredVersion != gvs[0] || !slices.Equal(g.Versions, gvs) {
				t.Errorf("group %s: %+v", g.Name, g)
			}
		}
		want := []string{"admissionregistration.k8s.io", "apps", "autoscaling", "batch", "certificates.k8s.io", "coordination.k8s.io", "discovery.k8s.io", "events.k8s.io", "networking.k8s.io", "operator.dnsplane.io", "policy", "rbac.authorization.k8s.io", "resource.k8s.io", "scheduling.k8s.io", "storage.k8s.io", "storagemigration.k8s.io"}
		if !slices.Equal(names, want) {
			t.Errorf("groups = %v, want %v", names, want)
		}
	})

	t.Run("/apis/apps", func(t *testing.T) {
		_, body := getDoc(t, srv.URL+"/apis/apps", "")
		var g metav1.APIGroup
		if err := json.Unmarshal(body, &g); err != nil {
			t.Fatal(err)
		}
		if g.Kind != "APIGroup" || g.APIVersion != "v1" || g.Name != "apps" || g.PreferredVersion.GroupVersion != "apps/v1" {
			t.Errorf("got %+v", g)
		}
	})

	resourceLists := []struct {
		path, groupVersion, apiVersion string
		want                           []metav1.APIResource
	}{
		{"/api/v1", "v1", "", []metav1.APIResource{
			{Name: "namespaces", SingularName: "namespace", Kind: "Namespace", Verbs: allVerbs, ShortNames: []string{"ns"}},
			{Name: "namespaces/status", Kind: "Namespace", Verbs: []string{"get", "patch", "update"}},
			{Name: "pods", SingularName: "pod", Namespaced: true, Kind: "Pod", Verbs: allVerbs, ShortNames: []string{"po"}, Categories: []string{"all"}},
			{Name: "pods/status", Namespaced: true, Kind: "Pod", Verbs: []string{"get", "patch", "update"}},
			{Name: "secrets", SingularName: "secret", Namespaced: true, Kind: "Secret", Verbs: allVerbs},
		}},
		{"/apis/apps/v1", "apps/v1", "v1", []metav1.APIResource{
			{Name: "deployments", SingularName: "deployment", Namespaced: true, Kind: "Deployment", Verbs: allVerbs, ShortNames: []string{"deploy"}, Categories: []string{"all"}},
			{Name: "deployments/status", Namespaced: true, Kind: "Deployment", Verbs: []string{"get", "patch", "update"}},
		}},
		{"/apis/operator.dnsplane.io/v1", "operator.dnsplane.io/v1", "v1", []metav1.APIResource{
			{Name: "dnses", SingularName: "dns", Kind: "DNS", Verbs: allVerbs},
			{Name: "dnses/status", Kind: "DNS", Verbs: []string{"get", "patch", "update"}},
		}},
	}
	for _, tc := range resourceLists {
		t.Run(tc.path, func(t *testing.T) {
			resp, body := getDoc(t, srv.URL+tc.path, "application/json")
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			var l metav1.APIResourceList
			if err := json.Unmarshal(body, &l); err != nil {
				t.Fatal(err)
			}
			if l.Kind != "APIResourceList" || l.APIVersion != tc.apiVersion || l.GroupVersion != tc.groupVersion {
				t.Errorf("header = %+v, groupVersion %q", l.TypeMeta, l.GroupVersion)
			}
			byName := map[string]metav1.APIResource{}
			var names []string
			for _, r := range l.APIResources {
				byName[r.Name] = r
				names = append(names, r.Name)
			}
			if !slices.IsSorted(names) {
				t.Errorf("resources not sorted: %v", names)
			}
			for _, want := range tc.want {
				got, ok := byName[want.Name]
				if !ok {
					t.Errorf("missing %s", want.Name)
					continue
				}
				if got.SingularName != want.SingularName || got.Namespaced != want.Namespaced || got.Kind != want.Kind ||
					!slices.Equal(got.Verbs, want.Verbs) || !slices.Equal(got.ShortNames, want.ShortNames) || !slices.Equal(got.Categories, want.Categories) {
					t.Errorf("%s = %+v, want %+v", want.Name, got, want)
				}
			}
		})
	}

	for _, path := range []string{"/apis/nope", "/apis/nope/v1", "/apis/apps/v2", "/api/v2"} {
		t.Run("404 "+path, func(t *testing.T) {
			resp, body := getDoc(t, srv.URL+path, "")
			var st metav1.Status
			if err := json.Unmarshal(body, &st); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusNotFound || st.Kind != "Status" || st.Reason != metav1.StatusReasonNotFound {
				t.Errorf("status %d, body %s", resp.StatusCode, body)
			}
		})
	}
}

func TestDiscoveryNegotiation(t *testing.T) {
	srv := newDocsServer(t)
	tests := []struct {
		name, accept, want string
	}{
		{"kubectl", kubectlDiscoveryAccept, ContentTypeAggregatedV2},
		{"client-go nopeer", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;profile=nopeer," + kubectlDiscoveryAccept, ContentTypeAggregatedV2},
		{"params in any order", "application/json; as=APIGroupDiscoveryList; v=v2; g=apidiscovery.k8s.io", ContentTypeAggregatedV2},
		{"v2beta1 only", "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList", ContentTypeAggregatedV2Beta1},
		{"v2beta1 preferred by q", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;q=0.5,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList", ContentTypeAggregatedV2Beta1},
		{"plain JSON preferred by q", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;q=0.9,application/json", "application/json"},
		{"plain JSON first", "application/json," + kubectlDiscoveryAccept, "application/json"},
		{"q=0 excludes v2", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;q=0,*/*", "application/json"},
		{"unknown version", "application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList,application/json", "application/json"},
		{"unknown profile", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;profile=other", "application/json"},
		{"protobuf only", "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", "application/json"},
		{"legacy client", "application/json", "application/json"},
		{"no Accept", "", "application/json"},
	}
	for _, tc := range tests {
		for _, path := range []string{"/api", "/apis"} {
			t.Run(tc.name+" "+path, func(t *testing.T) {
				resp, body := getDoc(t, srv.URL+path, tc.accept)
				if ct := resp.Header.Get("Content-Type"); ct != tc.want {
					t.Fatalf("Content-Type = %q, want %q", ct, tc.want)
				}
				var tm metav1.TypeMeta
				if err := json.Unmarshal(body, &tm); err != nil {
					t.Fatal(err)
				}
				switch tc.want {
				case ContentTypeAggregatedV2:
					if tm.APIVersion != "apidiscovery.k8s.io/v2" || tm.Kind != "APIGroupDiscoveryList" {
						t.Errorf("type meta %+v", tm)
					}
				case ContentTypeAggregatedV2Beta1:
					if tm.APIVersion != "apidiscovery.k8s.io/v2beta1" || tm.Kind != "APIGroupDiscoveryList" {
						t.Errorf("type meta %+v", tm)
					}
				default:
					if tm.Kind == "APIGroupDiscoveryList" {
						t.Errorf("got aggregated discovery for %q", tc.accept)
					}
				}
				if v := resp.Header.Values("Vary"); !slices.Contains(v, "Accept") {
					t.Errorf("Vary = %v", v)
				}
			})
		}
	}
}

func TestDiscoveryAggregatedDocuments(t *testing.T) {
	srv := newDocsServer(t)
	seen := map[schema.GroupVersionKind]bool{}
	for _, path := range []string{"/api", "/apis"} {
		_, body := getDoc(t, srv.URL+path, kubectlDiscoveryAccept)
		var l apidiscoveryv2.APIGroupDiscoveryList
		if err := json.Unmarshal(body, &l); err != nil {
			t.Fatal(err)
		}
		if path == "/api" && (len(l.Items) != 1 || l.Items[0].Name != "") {
			t.Fatalf("/api items: %+v", l.Items)
		}
		for _, g := range l.Items {
			var versions []string
			for _, v := range g.Versions {
				versions = append(versions, v.Version)
			}
			if !slices.Equal(versions, versionsOf(g.Name)) {
				t.Errorf("group %q versions %+v", g.Name, g.Versions)
				continue
			}
			for _, v := range g.Versions {
				checkAggregatedVersion(t, g.Name, v, seen)
			}
		}
	}
	for _, res := range served() {
		if !seen[res.GVK] {
			t.Errorf("%v missing from aggregated discovery", res.GVK)
		}
	}
}

// checkAggregatedVersion checks one version of a group in aggregated
// discovery against the served resources and records the kinds it saw.
func checkAggregatedVersion(t *testing.T, group string, v apidiscoveryv2.APIVersionDiscovery, seen map[schema.GroupVersionKind]bool) {
	t.Helper()
	if v.Freshness != apidiscoveryv2.DiscoveryFreshnessCurrent {
		t.Errorf("group %q version %s freshness %q", group, v.Version, v.Freshness)
	}
	for _, r := range v.Resources {
		if r.ResponseKind == nil {
			t.Errorf("%s/%s: no responseKind", group, r.Resource)
			continue
		}
		gvk := schema.GroupVersionKind{Group: r.ResponseKind.Group, Version: r.ResponseKind.Version, Kind: r.ResponseKind.Kind}
		res, ok := lookup(schema.GroupVersionResource{Group: group, Version: v.Version, Resource: r.Resource})
		if !ok || res.GVK != gvk {
			t.Errorf("%s/%s: responseKind %v", group, r.Resource, gvk)
			continue
		}
		seen[gvk] = true
		scope := apidiscoveryv2.ScopeCluster
		if res.Namespaced {
			scope = apidiscoveryv2.ScopeNamespace
		}
		if r.Scope != scope || r.SingularResource != res.Singular || !slices.Equal(r.Verbs, res.Verbs) ||
			!slices.Equal(r.ShortNames, res.ShortNames) || !slices.Equal(r.Categories, res.Categories) {
			t.Errorf("%s: %+v", r.Resource, r)
		}
		var subs []string
		for _, s := range r.Subresources {
			subs = append(subs, s.Subresource)
			gvk, verbs, _ := subresource(res, s.Subresource)
			if s.ResponseKind == nil || s.ResponseKind.Kind != gvk.Kind || s.ResponseKind.Group != gvk.Group || !slices.Equal(s.Verbs, verbs) {
				t.Errorf("%s/%s: %+v", r.Resource, s.Subresource, s)
			}
		}
		want := slices.Sorted(slices.Values(res.Subresources))
		if !slices.Equal(subs, want) {
			t.Errorf("%s subresources %v, want %v", r.Resource, subs, want)
		}
	}
}

// TestDiscoveryClientGo runs client-go's discovery client and REST mapper,
// as kubectl does, over both the aggregated and the legacy documents.
func TestDiscoveryClientGo(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		name := "aggregated"
		if legacy {
			name = "legacy"
		}
		t.Run(name, func(t *testing.T) {
			srv := newDocsServer(t)
			dc := cgdiscovery.NewDiscoveryClientForConfigOrDie(&rest.Config{Host: srv.URL})
			dc.UseLegacyDiscovery = legacy
			groups, lists, err := dc.ServerGroupsAndResources()
			if err != nil {
				t.Fatal(err)
			}
			perGV := false
			for _, p := range srv.requested() {
				if p == "/api/v1" || p == "/apis/apps/v1" {
					perGV = true
				}
			}
			if perGV != legacy {
				t.Errorf("requested %v; legacy = %v", srv.requested(), legacy)
			}
			if len(groups) != 17 {
				t.Errorf("%d groups", len(groups))
			}
			got := map[schema.GroupVersionResource]metav1.APIResource{}
			for _, l := range lists {
				gv, err := schema.ParseGroupVersion(l.GroupVersion)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range l.APIResources {
					got[gv.WithResource(r.Name)] = r
				}
			}
			for _, res := range served() {
				gvr := res.GVK.GroupVersion().WithResource(res.Plural)
				r, ok := got[gvr]
				if !ok {
					t.Errorf("%v missing", gvr)
					continue
				}
				if r.Kind != res.GVK.Kind || r.Namespaced != res.Namespaced || r.SingularName != res.Singular ||
					!slices.Equal(r.ShortNames, res.ShortNames) || !slices.Equal(r.Verbs, res.Verbs) || !slices.Equal(r.Categories, res.Categories) {
					t.Errorf("%v = %+v", gvr, r)
				}
				for _, name := range []string{"status", "scale", "binding", "exec", "attach", "log", "approval"} {
					if _, ok := got[res.GVK.GroupVersion().WithResource(res.Plural+"/"+name)]; ok != res.HasSubresource(name) {
						t.Errorf("%v/%s listed = %v", gvr, name, ok)
					}
				}
			}

			grs, err := restmapper.GetAPIGroupResources(dc)
			if err != nil {
				t.Fatal(err)
			}
			mapper := restmapper.NewShortcutExpander(restmapper.NewDiscoveryRESTMapper(grs), dc, func(string) {})
			for in, want := range map[string]schema.GroupVersionResource{
				"deploy":     {Group: "apps", Version: "v1", Resource: "deployments"},
				"po":         {Version: "v1", Resource: "pods"},
				"svc":        {Version: "v1", Resource: "services"},
				"cj":         {Group: "batch", Version: "v1", Resource: "cronjobs"},
				"dns":        {Group: "operator.dnsplane.io", Version: "v1", Resource: "dnses"},
				"lease":      {Group: "coordination.k8s.io", Version: "v1", Resource: "leases"},
				"hpa":        {Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"},
				"namespaces": {Version: "v1", Resource: "namespaces"},
			} {
				gvr, err := mapper.ResourceFor(schema.GroupVersionResource{Resource: in})
				if err != nil || gvr != want {
					t.Errorf("ResourceFor(%q) = %v, %v; want %v", in, gvr, err, want)
				}
			}
			m, err := mapper.RESTMapping(schema.GroupKind{Group: "apps", Kind: "Deployment"})
			if err != nil || m.Resource.Resource != "deployments" || m.Scope.Name() != "namespace" {
				t.Errorf("RESTMapping(Deployment) = %+v, %v", m, err)
			}
			all, ok := restmapper.NewDiscoveryCategoryExpander(dc).Expand("all")
			if !ok || !slices.Contains(all, schema.GroupResource{Group: "apps", Resource: "deployments"}) ||
				slices.Contains(all, schema.GroupResource{Resource: "secrets"}) {
				t.Errorf("category all = %v, %v", all, ok)
			}
		})
	}
}

// TestScaleAndBindingDiscovery: the legacy and aggregated documents announce
// deployments/scale as kube-apiserver does, which is what kubectl scale's
// scale-kind resolver reads, and a kind's own subresources with the kind and
// verbs the API server hands over (pods' come from internal/registry/core/pod;
// internal/apiserver's TestPodSubresourcesDiscovery checks those).
func TestScaleAndBindingDiscovery(t *testing.T) {
	rs := served()
	for i := range rs {
		if rs[i].GVK.Kind == "Pod" {
			rs[i].Subresources = append(slices.Clone(rs[i].Subresources), "binding", "eviction")
			rs[i].KindSubresources = append(slices.Clone(rs[i].KindSubresources),
				Subresource{Name: "binding", Kind: schema.GroupVersionKind{Version: "v1", Kind: "Binding"}, Verbs: []string{"create"}},
				Subresource{Name: "eviction", Kind: schema.GroupVersionKind{Group: "policy", Version: "v1", Kind: "Eviction"}, Verbs: []string{"create"}},
			)
		}
	}
	d := New(rs)
	list, ok := d.resourceList(schema.GroupVersion{Group: "apps", Version: "v1"})
	if !ok {
		t.Fatal("apps/v1 not served")
	}
	core, _ := d.resourceList(schema.GroupVersion{Version: "v1"})
	byName := map[string]metav1.APIResource{}
	for _, r := range append(list.APIResources, core.APIResources...) {
		byName[r.Name] = r
	}
	for name, want := range map[string]metav1.APIResource{
		"deployments/scale":            {Name: "deployments/scale", Namespaced: true, Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: []string{"get", "patch", "update"}},
		"replicationcontrollers/scale": {Name: "replicationcontrollers/scale", Namespaced: true, Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: []string{"get", "patch", "update"}},
		"pods/binding":                 {Name: "pods/binding", Namespaced: true, Kind: "Binding", Verbs: []string{"create"}},
		// Another group's kind: named with its group and version.
		"pods/eviction": {Name: "pods/eviction", Namespaced: true, Group: "policy", Version: "v1", Kind: "Eviction", Verbs: []string{"create"}},
	} {
		got := byName[name]
		if got.Name != want.Name || got.Group != want.Group || got.Version != want.Version || got.Kind != want.Kind || !slices.Equal(got.Verbs, want.Verbs) {
			t.Errorf("%s = %+v, want %+v", name, got, want)
		}
	}
	agg := d.aggregated(true)
	var evict *apidiscoveryv2.APISubresourceDiscovery
	for _, r := range agg.Items[0].Versions[0].Resources {
		for i, sub := range r.Subresources {
			if r.Resource == "pods" && sub.Subresource == "eviction" {
				evict = &r.Subresources[i]
			}
		}
	}
	if evict == nil || evict.ResponseKind.Group != "policy" || evict.ResponseKind.Kind != "Eviction" || !slices.Equal(evict.Verbs, []string{"create"}) {
		t.Errorf("aggregated pods/eviction = %+v", evict)
	}
}
