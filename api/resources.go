// Package api is the root of dnsplane's public Go types and of the one table
// of the resources dnsplane serves. The API server's routing, discovery,
// OpenAPI, storage keys and table printers, strict decoding and the offline
// `dnsplane validate` all derive from Resources, so adding a kind is one row
// here plus one strategy (internal/registry) and one printer
// (internal/printers); docs/architecture.md, "Adding a kind".
package api

import (
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	dpappsv1 "github.com/dnsplane/dnsplane/api/apps/v1"
	dpbatchv1 "github.com/dnsplane/dnsplane/api/batch/v1"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	dpoperatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
)

// Resource describes one REST resource: what discovery announces for it and
// the Go type its objects decode into.
type Resource struct {
	GVK        schema.GroupVersionKind
	Plural     string // URL segment and storage key prefix, e.g. "pods"
	Singular   string // lower-case kind, as discovery reports it
	Namespaced bool
	ShortNames []string
	Categories []string
	// Subresources served besides the main resource, the generic ones
	// every kind that names them has alike: "status" (the main resource
	// then ignores status changes and /status ignores the rest) and
	// "scale" (autoscaling/v1 Scale of spec.replicas), declared once in
	// internal/registry/rest (generic.go). A kind's own subresources
	// (namespaces/finalize, certificatesigningrequests/approval,
	// pods/binding, pods/eviction, pods/exec, …) are declared by its
	// package under internal/registry, and the API server adds their
	// names here. Discovery announces each with its kind and verbs.
	Subresources []string
	// Custom is true for dnsplane's own kinds, served as kube-apiserver
	// serves a CustomResourceDefinition's (the DNS operator also runs
	// against real clusters, where DNS is a CRD): JSON only, and no
	// strategic merge patch, which needs Go struct tags CRDs do not have.
	Custom bool
	// StorageGVK is the kind objects are stored as when it is not GVK:
	// the row is then another view of that row's objects, under the same
	// storage key prefix (the same Plural), converted through upstream's
	// internal type on every read and write. events.k8s.io/v1 Events are
	// stored as v1 Events, as kube-apiserver stores both in its "events"
	// prefix (k8s.io/kubernetes/pkg/registry/core/event/storage). The
	// zero value means GVK.
	StorageGVK schema.GroupVersionKind
	// New returns a pointer to a new, empty object of the kind's Go type.
	New func() any
}

// HasSubresource reports whether name (e.g. "status") is served.
func (r *Resource) HasSubresource(name string) bool { return slices.Contains(r.Subresources, name) }

// StoredAs is the kind the resource's objects are stored as.
func (r *Resource) StoredAs() schema.GroupVersionKind {
	if r.StorageGVK.Empty() {
		return r.GVK
	}
	return r.StorageGVK
}

// GroupResource is the resource's group and plural, as error messages name it.
func (r *Resource) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: r.GVK.Group, Resource: r.Plural}
}

// GroupVersionResource of the resource.
func (r *Resource) GroupVersionResource() schema.GroupVersionResource {
	return r.GVK.GroupVersion().WithResource(r.Plural)
}

// APIVersion is the apiVersion string objects of this resource carry.
func (r *Resource) APIVersion() string { return r.GVK.GroupVersion().String() }

const (
	status = "status"
	// scale is the autoscaling/v1 Scale of a kind with spec.replicas.
	scale = "scale"
)

// all is the "all" category kubectl get all expands.
var all = []string{"all"}

// apiExtensions is kube-apiserver's category of the kinds that extend the
// API (admission policies, webhooks, CRDs).
var apiExtensions = []string{"api-extensions"}

func core(kind, plural string, namespaced bool, short []string, subresources []string, cats []string, newObj func() any) Resource {
	return Resource{GVK: schema.GroupVersionKind{Version: "v1", Kind: kind}, Plural: plural, Namespaced: namespaced,
		ShortNames: short, Subresources: subresources, Categories: cats, New: newObj}
}

func group(grp, kind, plural string, namespaced bool, short []string, subresources []string, cats []string, newObj func() any) Resource {
	r := core(kind, plural, namespaced, short, subresources, cats, newObj)
	r.GVK.Group = grp
	return r
}

func custom(r Resource) Resource {
	r.Custom = true
	return r
}

// version sets the version of r, a row of a group served at another
// version than v1 (autoscaling/v2).
func version(v string, r Resource) Resource {
	r.GVK.Version = v
	return r
}

// storedAs makes r a view of the objects of the row of kind gvk.
func storedAs(gvk schema.GroupVersionKind, r Resource) Resource {
	r.StorageGVK = gvk
	return r
}

// resources is read-only after package initialisation; Resources hands out
// copies. Ordered by group, then plural, as discovery lists them.
var resources = sorted([]Resource{
	// Pod template carriers: dnsplane's types, which add spec.dnsParams.
	core("Pod", "pods", true, []string{"po"}, []string{status}, all, func() any { return &dpcorev1.Pod{} }),
	core("PodTemplate", "podtemplates", true, nil, nil, nil, func() any { return &dpcorev1.PodTemplate{} }),
	core("ReplicationController", "replicationcontrollers", true, []string{"rc"}, []string{status, scale}, all, func() any { return &dpcorev1.ReplicationController{} }),
	group("apps", "Deployment", "deployments", true, []string{"deploy"}, []string{status, scale}, all, func() any { return &dpappsv1.Deployment{} }),
	group("apps", "ReplicaSet", "replicasets", true, []string{"rs"}, []string{status, scale}, all, func() any { return &dpappsv1.ReplicaSet{} }),
	group("apps", "StatefulSet", "statefulsets", true, []string{"sts"}, []string{status, scale}, all, func() any { return &dpappsv1.StatefulSet{} }),
	group("apps", "DaemonSet", "daemonsets", true, []string{"ds"}, []string{status}, all, func() any { return &dpappsv1.DaemonSet{} }),
	group("batch", "Job", "jobs", true, nil, []string{status}, all, func() any { return &dpbatchv1.Job{} }),
	group("batch", "CronJob", "cronjobs", true, []string{"cj"}, []string{status}, all, func() any { return &dpbatchv1.CronJob{} }),

	// Everything else the API server serves: upstream types unchanged.
	core("Namespace", "namespaces", false, []string{"ns"}, []string{status}, nil, func() any { return &corev1.Namespace{} }),
	core("Service", "services", true, []string{"svc"}, []string{status}, all, func() any { return &corev1.Service{} }),
	//nolint:staticcheck // SA1019: deprecated for EndpointSlice, but kube-apiserver still serves Endpoints, so dnsplane does too
	core("Endpoints", "endpoints", true, []string{"ep"}, nil, nil, func() any { return &corev1.Endpoints{} }),
	core("ConfigMap", "configmaps", true, []string{"cm"}, nil, nil, func() any { return &corev1.ConfigMap{} }),
	core("Secret", "secrets", true, nil, nil, nil, func() any { return &corev1.Secret{} }),
	core("Node", "nodes", false, []string{"no"}, []string{status}, nil, func() any { return &corev1.Node{} }),
	core("Event", "events", true, []string{"ev"}, nil, nil, func() any { return &corev1.Event{} }),
	core("ServiceAccount", "serviceaccounts", true, []string{"sa"}, nil, nil, func() any { return &corev1.ServiceAccount{} }),
	// The kinds kube-controller-manager's and kube-scheduler's informers
	// list (issue 19): upstream types unchanged, short names and
	// categories as kube-apiserver's pkg/registry/<group>/<kind>/storage.
	core("PersistentVolume", "persistentvolumes", false, []string{"pv"}, []string{status}, nil, func() any { return &corev1.PersistentVolume{} }),
	core("PersistentVolumeClaim", "persistentvolumeclaims", true, []string{"pvc"}, []string{status}, nil, func() any { return &corev1.PersistentVolumeClaim{} }),
	core("ResourceQuota", "resourcequotas", true, []string{"quota"}, []string{status}, nil, func() any { return &corev1.ResourceQuota{} }),
	core("LimitRange", "limitranges", true, []string{"limits"}, nil, nil, func() any { return &corev1.LimitRange{} }),
	group("apps", "ControllerRevision", "controllerrevisions", true, nil, nil, nil, func() any { return &appsv1.ControllerRevision{} }),
	group("policy", "PodDisruptionBudget", "poddisruptionbudgets", true, []string{"pdb"}, []string{status}, nil, func() any { return &policyv1.PodDisruptionBudget{} }),
	group("scheduling.k8s.io", "PriorityClass", "priorityclasses", false, []string{"pc"}, nil, nil, func() any { return &schedulingv1.PriorityClass{} }),
	version("v2", group("autoscaling", "HorizontalPodAutoscaler", "horizontalpodautoscalers", true, []string{"hpa"}, []string{status}, all, func() any { return &autoscalingv2.HorizontalPodAutoscaler{} })),
	// autoscaling/v1 HorizontalPodAutoscalers are a view of the v2 objects,
	// converted by upstream's conversions (metrics v1 cannot express ride
	// in annotations), as kube-apiserver serves both.
	storedAs(autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"),
		group("autoscaling", "HorizontalPodAutoscaler", "horizontalpodautoscalers", true, []string{"hpa"}, []string{status}, all, func() any { return &autoscalingv1.HorizontalPodAutoscaler{} })),
	group("networking.k8s.io", "Ingress", "ingresses", true, []string{"ing"}, []string{status}, nil, func() any { return &networkingv1.Ingress{} }),
	group("networking.k8s.io", "IngressClass", "ingressclasses", false, nil, nil, nil, func() any { return &networkingv1.IngressClass{} }),
	group("networking.k8s.io", "NetworkPolicy", "networkpolicies", true, []string{"netpol"}, nil, nil, func() any { return &networkingv1.NetworkPolicy{} }),
	group("networking.k8s.io", "ServiceCIDR", "servicecidrs", false, nil, []string{status}, nil, func() any { return &networkingv1.ServiceCIDR{} }),
	group("networking.k8s.io", "IPAddress", "ipaddresses", false, []string{"ip"}, nil, nil, func() any { return &networkingv1.IPAddress{} }),
	group("certificates.k8s.io", "CertificateSigningRequest", "certificatesigningrequests", false, []string{"csr"}, []string{status}, nil, func() any { return &certificatesv1.CertificateSigningRequest{} }),
	group("certificates.k8s.io", "PodCertificateRequest", "podcertificaterequests", true, nil, []string{status}, nil, func() any { return &certificatesv1.PodCertificateRequest{} }),
	group("certificates.k8s.io", "ClusterTrustBundle", "clustertrustbundles", false, nil, nil, nil, func() any { return &certificatesv1.ClusterTrustBundle{} }),
	group("discovery.k8s.io", "EndpointSlice", "endpointslices", true, nil, nil, nil, func() any { return &discoveryv1.EndpointSlice{} }),
	group("coordination.k8s.io", "Lease", "leases", true, nil, nil, nil, func() any { return &coordinationv1.Lease{} }),
	// Kinds kube-controller-manager and kube-scheduler list (issue 19):
	// storage, dynamic resource allocation, RBAC, admission policies.
	group("storage.k8s.io", "StorageClass", "storageclasses", false, []string{"sc"}, nil, nil, func() any { return &storagev1.StorageClass{} }),
	group("storage.k8s.io", "CSINode", "csinodes", false, nil, []string{status}, nil, func() any { return &storagev1.CSINode{} }),
	group("storage.k8s.io", "CSIDriver", "csidrivers", false, nil, nil, nil, func() any { return &storagev1.CSIDriver{} }),
	group("storage.k8s.io", "CSIStorageCapacity", "csistoragecapacities", true, nil, nil, nil, func() any { return &storagev1.CSIStorageCapacity{} }),
	group("storage.k8s.io", "VolumeAttachment", "volumeattachments", false, nil, []string{status}, nil, func() any { return &storagev1.VolumeAttachment{} }),
	group("storage.k8s.io", "VolumeAttributesClass", "volumeattributesclasses", false, []string{"vac"}, nil, nil, func() any { return &storagev1.VolumeAttributesClass{} }),
	group("rbac.authorization.k8s.io", "Role", "roles", true, nil, nil, nil, func() any { return &rbacv1.Role{} }),
	group("rbac.authorization.k8s.io", "ClusterRole", "clusterroles", false, nil, nil, nil, func() any { return &rbacv1.ClusterRole{} }),
	group("rbac.authorization.k8s.io", "RoleBinding", "rolebindings", true, nil, nil, nil, func() any { return &rbacv1.RoleBinding{} }),
	group("rbac.authorization.k8s.io", "ClusterRoleBinding", "clusterrolebindings", false, nil, nil, nil, func() any { return &rbacv1.ClusterRoleBinding{} }),
	group("resource.k8s.io", "DeviceClass", "deviceclasses", false, nil, nil, nil, func() any { return &resourcev1.DeviceClass{} }),
	group("resource.k8s.io", "ResourceClaim", "resourceclaims", true, nil, []string{status}, nil, func() any { return &resourcev1.ResourceClaim{} }),
	group("resource.k8s.io", "ResourceClaimTemplate", "resourceclaimtemplates", true, nil, nil, nil, func() any { return &resourcev1.ResourceClaimTemplate{} }),
	group("resource.k8s.io", "ResourceSlice", "resourceslices", false, nil, nil, nil, func() any { return &resourcev1.ResourceSlice{} }),
	group("resource.k8s.io", "DeviceTaintRule", "devicetaintrules", false, nil, []string{status}, nil, func() any { return &resourcev1.DeviceTaintRule{} }),
	// Stored and validated, not enforced (docs/apiserver.md).
	group("admissionregistration.k8s.io", "ValidatingAdmissionPolicy", "validatingadmissionpolicies", false, nil, []string{status}, apiExtensions, func() any { return &admissionregistrationv1.ValidatingAdmissionPolicy{} }),
	group("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings", false, nil, nil, apiExtensions, func() any { return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{} }),
	group("storagemigration.k8s.io", "StorageVersionMigration", "storageversionmigrations", false, nil, []string{status}, nil, func() any { return &storagemigrationv1.StorageVersionMigration{} }),
	// The events.k8s.io view of v1 Events, as kube-apiserver serves both.
	storedAs(corev1.SchemeGroupVersion.WithKind("Event"),
		group("events.k8s.io", "Event", "events", true, []string{"ev"}, nil, nil, func() any { return &eventsv1.Event{} })),

	// dnsplane's own API.
	custom(group(dpoperatorv1.GroupName, "DNS", "dnses", false, nil, []string{status}, nil, func() any { return &dpoperatorv1.DNS{} })),
})

func sorted(rs []Resource) []Resource {
	for i := range rs {
		rs[i].Singular = strings.ToLower(rs[i].GVK.Kind)
	}
	slices.SortStableFunc(rs, func(a, b Resource) int {
		if c := strings.Compare(a.GVK.Group, b.GVK.Group); c != 0 {
			return c
		}
		return strings.Compare(a.Plural, b.Plural)
	})
	return rs
}

// Resources returns every served resource, ordered by group then plural.
// The slice is a copy; its entries share their string slices with the
// table and must not be modified.
func Resources() []Resource { return slices.Clone(resources) }

// Lookup returns the resource whose objects have kind gvk.
func Lookup(gvk schema.GroupVersionKind) (Resource, bool) {
	for _, r := range resources {
		if r.GVK == gvk {
			return r, true
		}
	}
	return Resource{}, false
}

// New returns a pointer to a new, empty object of the Go type that decodes
// gvk, and false when dnsplane does not serve that kind.
func New(gvk schema.GroupVersionKind) (any, bool) {
	r, ok := Lookup(gvk)
	if !ok {
		return nil, false
	}
	return r.New(), true
}

// Kinds returns every kind New knows.
func Kinds() []schema.GroupVersionKind {
	out := make([]schema.GroupVersionKind, 0, len(resources))
	for _, r := range resources {
		out = append(out, r.GVK)
	}
	return out
}
