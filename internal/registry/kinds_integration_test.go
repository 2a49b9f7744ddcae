package registry_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/dnsplane/dnsplane/api"
	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
)

// TestUpstreamValidationControllerKinds runs, as TestUpstreamValidation
// does, the cases of the kinds kube-controller-manager and kube-scheduler
// list (issue 19) against one server, then reads back what defaulting set.
func TestUpstreamValidationControllerKinds(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	ts := controlplanetest.StartTestServer(t, controlplane.Config{})
	for _, tt := range []struct {
		gvk   schema.GroupVersionKind
		cases func(ns string) []kindCase
	}{
		{storagev1.SchemeGroupVersion.WithKind("StorageClass"), storageClassCases},
		{storagev1.SchemeGroupVersion.WithKind("CSINode"), csiNodeCases},
		{storagev1.SchemeGroupVersion.WithKind("CSIDriver"), csiDriverCases},
		{storagev1.SchemeGroupVersion.WithKind("CSIStorageCapacity"), csiStorageCapacityCases},
		{storagev1.SchemeGroupVersion.WithKind("VolumeAttachment"), volumeAttachmentCases},
		{storagev1.SchemeGroupVersion.WithKind("VolumeAttributesClass"), volumeAttributesClassCases},
		{rbacv1.SchemeGroupVersion.WithKind("Role"), roleCases},
		{rbacv1.SchemeGroupVersion.WithKind("ClusterRole"), clusterRoleCases},
		{rbacv1.SchemeGroupVersion.WithKind("RoleBinding"), roleBindingCases},
		{rbacv1.SchemeGroupVersion.WithKind("ClusterRoleBinding"), clusterRoleBindingCases},
		{resourcev1.SchemeGroupVersion.WithKind("DeviceClass"), deviceClassCases},
		{resourcev1.SchemeGroupVersion.WithKind("ResourceClaim"), resourceClaimCases},
		{resourcev1.SchemeGroupVersion.WithKind("ResourceClaimTemplate"), resourceClaimTemplateCases},
		{resourcev1.SchemeGroupVersion.WithKind("ResourceSlice"), resourceSliceCases},
		{resourcev1.SchemeGroupVersion.WithKind("DeviceTaintRule"), deviceTaintRuleCases},
	} {
		t.Run(tt.gvk.Kind, func(t *testing.T) { runKindCases(t, ts.Client, tt.gvk, tt.cases) })
	}
	t.Run("defaults", func(t *testing.T) {
		checkStorageRBACDRADefaults(t, ts.Client)
		checkDRADefaults(t, ts.Client)
	})
	t.Run("DRA admin access", func(t *testing.T) { checkAdminAccess(t, ts.Client) })
	t.Run("informers", func(t *testing.T) { checkInformersSync(t, ts.Client) })
	t.Run("protobuf", func(t *testing.T) { checkProtobufWrites(t, ts.ClientConfig) })
}

// checkStorageRBACDRADefaults reads back valid objects the cases created,
// through client-go's typed clients (as the controllers read them), and
// checks upstream's v1 defaults and the strategies' status handling.
func checkStorageRBACDRADefaults(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	sc, err := c.StorageV1().StorageClasses().Get(ctx, "valid", metav1.GetOptions{})
	if err != nil || sc.ReclaimPolicy == nil || *sc.ReclaimPolicy != corev1.PersistentVolumeReclaimDelete ||
		sc.VolumeBindingMode == nil || *sc.VolumeBindingMode != storagev1.VolumeBindingImmediate {
		t.Errorf("storage class: %v %+v", err, sc)
	}
	d, err := c.StorageV1().CSIDrivers().Get(ctx, "csi.example.com", metav1.GetOptions{})
	if err != nil || d.Spec.AttachRequired == nil || !*d.Spec.AttachRequired || d.Spec.PodInfoOnMount == nil || *d.Spec.PodInfoOnMount ||
		d.Spec.FSGroupPolicy == nil || *d.Spec.FSGroupPolicy != storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy ||
		len(d.Spec.VolumeLifecycleModes) != 1 || d.Spec.VolumeLifecycleModes[0] != storagev1.VolumeLifecyclePersistent {
		t.Errorf("CSI driver: %v %+v", err, d)
	}
	// The client's status was dropped on create; /status wrote it later.
	va, err := c.StorageV1().VolumeAttachments().Get(ctx, "valid", metav1.GetOptions{})
	if err != nil || va.Status.Attached {
		t.Errorf("volume attachment: %v %+v", err, va)
	}
	va, err = c.StorageV1().VolumeAttachments().Get(ctx, "status-ok", metav1.GetOptions{})
	if err != nil || !va.Status.Attached || va.Spec.NodeName != "node-1" {
		t.Errorf("volume attachment after /status: %v %+v", err, va)
	}
	rb, err := c.RbacV1().RoleBindings("rolebinding").Get(ctx, "valid", metav1.GetOptions{})
	if err != nil || rb.Subjects[0].APIGroup != rbacv1.GroupName {
		t.Errorf("role binding (a User subject's apiGroup defaults to rbac's): %v %+v", err, rb)
	}
}

func storageClass(name string, mutate ...func(*storagev1.StorageClass)) *storagev1.StorageClass {
	sc := &storagev1.StorageClass{TypeMeta: metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "StorageClass"},
		ObjectMeta: meta(name), Provisioner: "example.com/csi"}
	for _, m := range mutate {
		m(sc)
	}
	return sc
}

func storageClassCases(string) []kindCase {
	return []kindCase{
		{name: "valid", obj: storageClass("valid")},
		{name: "no provisioner", obj: storageClass("no-provisioner", func(sc *storagev1.StorageClass) { sc.Provisioner = "" }),
			causes: []metav1.StatusCause{cause(required, "provisioner", "Required value")}},
		{name: "unknown binding mode", obj: storageClass("bad-mode", func(sc *storagev1.StorageClass) {
			m := storagev1.VolumeBindingMode("Later")
			sc.VolumeBindingMode = &m
		}), causes: []metav1.StatusCause{cause(unsupported, "volumeBindingMode", `Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"`)}},
		{name: "update changes the provisioner", before: storageClass("upd"),
			obj: storageClass("upd", func(sc *storagev1.StorageClass) { sc.Provisioner = "example.com/other" }),
			// Declarative validation's error, which covers the handwritten one.
			causes: []metav1.StatusCause{cause(invalid, "provisioner", "Invalid value: null: field is immutable")}},
	}
}

func csiNode(name, nodeID string) *storagev1.CSINode {
	return &storagev1.CSINode{TypeMeta: metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "CSINode"}, ObjectMeta: meta(name),
		Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "csi.example.com", NodeID: nodeID}}}}
}

func csiNodeCases(string) []kindCase {
	return []kindCase{
		{name: "valid", obj: csiNode("node-1", "n1")},
		{name: "no node ID", obj: csiNode("node-2", ""),
			causes: []metav1.StatusCause{cause(required, "spec.drivers[0].nodeID", "Required value")}},
	}
}

func csiDriver(name string, mutate ...func(*storagev1.CSIDriver)) *storagev1.CSIDriver {
	d := &storagev1.CSIDriver{TypeMeta: metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "CSIDriver"}, ObjectMeta: meta(name)}
	for _, m := range mutate {
		m(d)
	}
	return d
}

func csiDriverCases(string) []kindCase {
	return []kindCase{
		{name: "valid", obj: csiDriver("csi.example.com")},
		{name: "invalid name", obj: csiDriver("Bad_Name"),
			causes: []metav1.StatusCause{cause(invalid, "metadata.name",
				`Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`)}},
		{name: "update changes attachRequired", before: csiDriver("upd.example.com"),
			obj: csiDriver("upd.example.com", func(d *storagev1.CSIDriver) { d.Spec.AttachRequired = ptr(false) }),
			// Upstream's path has the typo.
			causes: []metav1.StatusCause{cause(invalid, "spec.attachedRequired", "Invalid value: false: field is immutable")}},
	}
}

func csiStorageCapacity(name, class string) *storagev1.CSIStorageCapacity {
	q := resource.MustParse("10Gi")
	return &storagev1.CSIStorageCapacity{TypeMeta: metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "CSIStorageCapacity"},
		ObjectMeta: meta(name), StorageClassName: class, Capacity: &q}
}

func csiStorageCapacityCases(string) []kindCase {
	return []kindCase{
		{name: "valid", obj: csiStorageCapacity("valid", "fast")},
		{name: "no storage class", obj: csiStorageCapacity("no-class", ""),
			causes: []metav1.StatusCause{cause(invalid, "storageClassName", `Invalid value: "": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`)}},
		{name: "update changes the class", before: csiStorageCapacity("upd", "fast"), obj: csiStorageCapacity("upd", "slow"),
			causes: []metav1.StatusCause{cause(invalid, "storageClassName", `Invalid value: "slow": field is immutable`)}},
	}
}

func volumeAttachment(name string, mutate ...func(*storagev1.VolumeAttachment)) *storagev1.VolumeAttachment {
	va := &storagev1.VolumeAttachment{TypeMeta: metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "VolumeAttachment"}, ObjectMeta: meta(name),
		Spec: storagev1.VolumeAttachmentSpec{Attacher: "csi.example.com", NodeName: "node-1",
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr("pv-1")}}}
	for _, m := range mutate {
		m(va)
	}
	return va
}

func volumeAttachmentCases(string) []kindCase {
	return []kindCase{
		// The status a client sends on create is dropped (checked in defaults).
		{name: "valid", obj: volumeAttachment("valid", func(va *storagev1.VolumeAttachment) { va.Status.Attached = true })},
		{name: "no source", obj: volumeAttachment("no-source", func(va *storagev1.VolumeAttachment) { va.Spec.Source = storagev1.VolumeAttachmentSource{} }),
			causes: []metav1.StatusCause{cause(required, "spec.source", "Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName")}},
		{name: "update changes the node", before: volumeAttachment("upd"),
			obj:    volumeAttachment("upd", func(va *storagev1.VolumeAttachment) { va.Spec.NodeName = "node-2" }),
			causes: []metav1.StatusCause{cause(invalid, "spec", "Invalid value: null: field is immutable")}},
		{name: "status attached", before: volumeAttachment("status-ok"), status: true,
			obj: volumeAttachment("status-ok", func(va *storagev1.VolumeAttachment) { va.Status.Attached = true })},
		{name: "status with a negative error code", before: volumeAttachment("status-bad"), status: true,
			obj: volumeAttachment("status-bad", func(va *storagev1.VolumeAttachment) {
				va.Status.AttachError = &storagev1.VolumeError{Message: "no", ErrorCode: ptr(int32(-1))}
			}),
			causes: []metav1.StatusCause{cause(invalid, "status.attachError.errorCode", "Invalid value: -1: must be between 0 and 2147483647, inclusive")}},
	}
}

func volumeAttributesClass(name, driver string, params map[string]string) *storagev1.VolumeAttributesClass {
	return &storagev1.VolumeAttributesClass{TypeMeta: metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "VolumeAttributesClass"},
		ObjectMeta: meta(name), DriverName: driver, Parameters: params}
}

func volumeAttributesClassCases(string) []kindCase {
	return []kindCase{
		{name: "valid", obj: volumeAttributesClass("gold", "csi.example.com", map[string]string{"iops": "3000"})},
		{name: "no driver", obj: volumeAttributesClass("no-driver", "", nil),
			causes: []metav1.StatusCause{cause(required, "driverName", "Required value"),
				cause(required, "parameters", "Required value: must contain at least one key/value pair")}},
		{name: "update changes the parameters", before: volumeAttributesClass("upd", "csi.example.com", map[string]string{"iops": "3000"}),
			obj:    volumeAttributesClass("upd", "csi.example.com", map[string]string{"iops": "6000"}),
			causes: []metav1.StatusCause{cause(forbidden, "parameters", "Forbidden: updates to parameters are forbidden.")}},
	}
}

var readPods = rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}}

func roleCases(string) []kindCase {
	role := func(name string, rules ...rbacv1.PolicyRule) *rbacv1.Role {
		return &rbacv1.Role{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"}, ObjectMeta: meta(name), Rules: rules}
	}
	return []kindCase{
		{name: "valid", obj: role("reader", readPods)},
		{name: "rule without verbs", obj: role("no-verbs", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}}),
			causes: []metav1.StatusCause{cause(required, "rules[0].verbs", "Required value")}},
		{name: "non-resource URL in a namespace", obj: role("urls", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}),
			causes: []metav1.StatusCause{cause(invalid, "rules[0].nonResourceURLs", `Invalid value: ["/healthz"]: namespaced rules cannot apply to non-resource URLs`)}},
	}
}

func clusterRoleCases(string) []kindCase {
	clusterRole := func(name string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
		return &rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"}, ObjectMeta: meta(name), Rules: rules}
	}
	return []kindCase{
		{name: "valid", obj: clusterRole("reader", readPods, rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}})},
		{name: "resources and URLs in one rule", obj: clusterRole("mixed", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""},
			Resources: []string{"pods"}, NonResourceURLs: []string{"/healthz"}}),
			causes: []metav1.StatusCause{cause(invalid, "rules[0].nonResourceURLs", `Invalid value: ["/healthz"]: rules cannot apply to both regular resources and non-resource URLs`)}},
	}
}

var roleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "reader"}

func roleBindingCases(string) []kindCase {
	binding := func(name string, ref rbacv1.RoleRef) *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"}, ObjectMeta: meta(name),
			RoleRef: ref, Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "alice"}}}
	}
	other := roleRef
	other.Name = "writer"
	return []kindCase{
		{name: "valid", obj: binding("valid", roleRef)},
		{name: "unknown role kind", obj: binding("bad-kind", rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Group", Name: "x"}),
			causes: []metav1.StatusCause{cause(unsupported, "roleRef.kind", `Unsupported value: "Group": supported values: "Role", "ClusterRole"`)}},
		{name: "update changes roleRef", before: binding("upd", roleRef), obj: binding("upd", other),
			// The handwritten error (declarative's is alpha here), whose
			// value is upstream's internal RoleRef.
			causes: []metav1.StatusCause{cause(invalid, "roleRef", `Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"Role","Name":"writer"}: field is immutable`)}},
	}
}

func clusterRoleBindingCases(string) []kindCase {
	binding := func(name string, ref rbacv1.RoleRef) *rbacv1.ClusterRoleBinding {
		return &rbacv1.ClusterRoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"}, ObjectMeta: meta(name),
			RoleRef: ref, Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "kube-system", Name: "builder"}}}
	}
	return []kindCase{
		{name: "valid", obj: binding("valid", rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "reader"})},
		{name: "binds a Role", obj: binding("role", roleRef),
			causes: []metav1.StatusCause{cause(unsupported, "roleRef.kind", `Unsupported value: "Role": supported values: "ClusterRole"`)}},
	}
}

// checkInformersSync starts client-go informers for every kind of issue 19,
// as kube-controller-manager and kube-scheduler do, and waits for them to
// sync (a list, then a watch); then objects created afterwards must reach
// the informers' caches through their watches.
func checkInformersSync(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory := informers.NewSharedInformerFactory(c, 0)
	var gvrs []schema.GroupVersionResource
	for _, r := range api.Resources() {
		switch r.GVK.Group {
		case storagev1.GroupName, rbacv1.GroupName, resourcev1.GroupName:
			gvrs = append(gvrs, r.GroupVersionResource())
		}
	}
	if len(gvrs) != 15 {
		t.Errorf("%d kinds of issue 19 served, want 15", len(gvrs))
	}
	generic := map[schema.GroupVersionResource]informers.GenericInformer{}
	for _, gvr := range gvrs {
		i, err := factory.ForResource(gvr)
		if err != nil {
			t.Fatalf("%v: %v", gvr, err)
		}
		generic[gvr] = i
	}
	factory.Start(ctx.Done())
	syncCtx, stop := context.WithTimeout(ctx, 30*time.Second)
	defer stop()
	for typ, ok := range factory.WaitForCacheSync(syncCtx.Done()) {
		if !ok {
			t.Errorf("informer of %v did not sync", typ)
		}
	}

	// Created after the sync: each must arrive through a watch.
	created := map[schema.GroupVersionResource]string{
		storagev1.SchemeGroupVersion.WithResource("storageclasses"):  "watched",
		rbacv1.SchemeGroupVersion.WithResource("clusterroles"):       "watched",
		resourcev1.SchemeGroupVersion.WithResource("resourceslices"): "watched",
	}
	if _, err := c.StorageV1().StorageClasses().Create(ctx, storageClass("watched"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: meta("watched"), Rules: []rbacv1.PolicyRule{readPods}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ResourceV1().ResourceSlices().Create(ctx, resourceSlice("watched", ptr("node-1")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for gvr, name := range created {
		err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			_, err := generic[gvr].Lister().Get(name)
			return err == nil, nil
		})
		if err != nil {
			t.Errorf("%v %q never reached the informer: %v", gvr, name, err)
		}
	}
}

// checkProtobufWrites writes objects of issue 19's kinds as the controller
// manager's controllers write them: client-go with protobuf bodies (the
// attach-detach controller creates VolumeAttachments, the resourceclaim
// controller ResourceClaims and their status).
func checkProtobufWrites(t *testing.T, cfg *rest.Config) {
	t.Helper()
	ctx := context.Background()
	pcfg := rest.CopyConfig(cfg)
	pcfg.ContentType = "application/vnd.kubernetes.protobuf"
	pcfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	c, err := kubernetes.NewForConfig(pcfg)
	if err != nil {
		t.Fatal(err)
	}
	va, err := c.StorageV1().VolumeAttachments().Create(ctx, volumeAttachment("proto"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	va.Status.Attached = true
	if va, err = c.StorageV1().VolumeAttachments().UpdateStatus(ctx, va, metav1.UpdateOptions{}); err != nil || !va.Status.Attached {
		t.Errorf("status: %v %+v", err, va)
	}
	if _, err := c.ResourceV1().ResourceClaims("resourceclaim").Create(ctx, resourceClaim("proto", "gpu"), metav1.CreateOptions{}); err != nil {
		t.Errorf("resource claim: %v", err)
	}
	// A refused protobuf write gets upstream's 422 too.
	_, err = c.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: meta("proto"), RoleRef: roleRef}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || err.Error() != `ClusterRoleBinding.rbac.authorization.k8s.io "proto" is invalid: roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"` {
		t.Errorf("invalid binding: %v", err)
	}
}
