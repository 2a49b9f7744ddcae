package noderestriction

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/utils/ptr"
)

var (
	csiNodes       = schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "csinodes"}
	resourceSlices = schema.GroupVersionResource{Group: "resource.k8s.io", Version: "v1", Resource: "resourceslices"}
	csrs           = schema.GroupVersionResource{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests"}
	pcrs           = schema.GroupVersionResource{Group: "certificates.k8s.io", Version: "v1", Resource: "podcertificaterequests"}
)

func pvc(labels map[string]string, phase corev1.PersistentVolumeClaimPhase, capacity string, conditions ...corev1.PersistentVolumeClaimCondition) *corev1.PersistentVolumeClaim {
	c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "data", Labels: labels, ResourceVersion: "7"}}
	c.Status.Phase = phase
	c.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(capacity)}
	c.Status.Conditions = conditions
	return c
}

func pvcStatus(obj, old *corev1.PersistentVolumeClaim) Attributes {
	return Attributes{User: nodeA, Operation: admission.Update, Resource: pvcs, Subresource: "status", Namespace: "default", Name: "data", Object: obj, OldObject: old}
}

// TestAdmitPVCStatus: upstream's admitPVCStatus, with
// RecoverVolumeExpansionFailure on (locked on since 1.34).
func TestAdmitPVCStatus(t *testing.T) {
	t.Parallel()
	bound := pvc(nil, corev1.ClaimBound, "1Gi")
	resizing := corev1.PersistentVolumeClaimCondition{Type: corev1.PersistentVolumeClaimFileSystemResizePending, Status: corev1.ConditionTrue}
	allocated := pvc(nil, corev1.ClaimBound, "1Gi")
	allocated.Status.AllocatedResources = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}
	allocated.Status.AllocatedResourceStatuses = map[corev1.ResourceName]corev1.ClaimResourceStatus{corev1.ResourceStorage: corev1.PersistentVolumeClaimNodeResizeInProgress}
	unconditional := pvc(nil, corev1.ClaimBound, "2Gi")
	unconditional.ResourceVersion = ""
	withFinalizer := pvc(nil, corev1.ClaimBound, "1Gi")
	withFinalizer.Finalizers = []string{"example.com/keep"}
	run(t, hosted(t, config{Objects: store{}}), []admitCase{
		{"capacity", pvcStatus(pvc(nil, corev1.ClaimBound, "2Gi"), bound), "", 0},
		{"conditions", pvcStatus(pvc(nil, corev1.ClaimBound, "1Gi", resizing), bound), "", 0},
		{"allocated resources and their statuses", pvcStatus(allocated, bound), "", 0},
		{"without a resourceVersion", pvcStatus(unconditional, bound), "", 0},
		{"the phase", pvcStatus(pvc(nil, corev1.ClaimLost, "1Gi"), bound),
			`persistentvolumeclaims "data" is forbidden: node "node-a" is not allowed to update fields other than status.quantity and status.conditions: `, 0},
		{"labels", pvcStatus(pvc(map[string]string{"a": "b"}, corev1.ClaimBound, "1Gi"), bound), "is not allowed to update fields other than status.quantity and status.conditions", 0},
		{"finalizers", pvcStatus(withFinalizer, bound), "is not allowed to update fields other than", 0},
		{"the claim itself", Attributes{User: nodeA, Operation: admission.Update, Resource: pvcs, Namespace: "default", Name: "data", Object: bound, OldObject: bound},
			"may only update PVC status", 0},
		{"delete a claim", Attributes{User: nodeA, Operation: admission.Delete, Resource: pvcs, Namespace: "default", Name: "data", OldObject: bound},
			"may only update PVC status", 0},
		{"admin changes the phase", Attributes{User: admin, Operation: admission.Update, Resource: pvcs, Subresource: "status", Namespace: "default", Name: "data",
			Object: pvc(nil, corev1.ClaimLost, "1Gi"), OldObject: bound}, "", 0},
	})
}

func csiNode(name string, drivers ...string) *storagev1.CSINode {
	n := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, d := range drivers {
		n.Spec.Drivers = append(n.Spec.Drivers, storagev1.CSINodeDriver{Name: d, NodeID: name})
	}
	return n
}

// TestAdmitCSINode: upstream's admitCSINode and, with CSIVolumeHealth,
// admitCSINodeStatus.
func TestAdmitCSINode(t *testing.T) {
	t.Parallel()
	own, other := csiNode("node-a"), csiNode("node-b")
	status := func(obj, old *storagev1.CSINode) Attributes {
		return Attributes{User: nodeA, Operation: admission.Update, Resource: csiNodes, Subresource: "status", Name: obj.Name, Object: obj, OldObject: old}
	}
	run(t, hosted(t, config{Objects: store{}}), []admitCase{
		{"create its own", Attributes{User: nodeA, Operation: admission.Create, Resource: csiNodes, Object: own}, "", 0},
		{"update its own", Attributes{User: nodeA, Operation: admission.Update, Resource: csiNodes, Name: "node-a", Object: csiNode("node-a", "d"), OldObject: own}, "", 0},
		{"delete its own", Attributes{User: nodeA, Operation: admission.Delete, Resource: csiNodes, Name: "node-a", OldObject: own}, "", 0},
		{"create another's", Attributes{User: nodeA, Operation: admission.Create, Resource: csiNodes, Object: other},
			`csinodes.storage.k8s.io "node-b" is forbidden: can only access CSINode with the same name as the requesting node`, 0},
		{"update another's", Attributes{User: nodeA, Operation: admission.Update, Resource: csiNodes, Name: "node-b", Object: other, OldObject: other},
			"can only access CSINode with the same name as the requesting node", 0},
		{"delete another's", Attributes{User: nodeA, Operation: admission.Delete, Resource: csiNodes, Name: "node-b", OldObject: other},
			"can only access CSINode with the same name as the requesting node", 0},
		{"its status, CSIVolumeHealth off", status(own, own), "CSIVolumeHealth feature gate is disabled", 0},
		{"admin, another's", Attributes{User: admin, Operation: admission.Delete, Resource: csiNodes, Name: "node-b", OldObject: other}, "", 0},
	})
	run(t, hosted(t, config{Objects: store{}, Gates: gates(t, map[string]bool{"CSIVolumeHealth": true})}), []admitCase{
		{"its status", status(own, own), "", 0},
		{"its spec through status", status(csiNode("node-a", "d"), own), `node "node-a" is not allowed to modify CSINode spec via status`, 0},
		{"another's status", status(other, other), "can only access CSINode with the same name", 0},
	})
}

func slice(node *string) *resourcev1.ResourceSlice {
	return &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: resourcev1.ResourceSliceSpec{NodeName: node, Driver: "d"}}
}

// TestAdmitResourceSlice: upstream's admitResourceSlice: create and delete
// by spec.nodeName; updates are the Node authorizer's.
func TestAdmitResourceSlice(t *testing.T) {
	t.Parallel()
	own, other, none := slice(ptr.To("node-a")), slice(ptr.To("node-b")), slice(nil)
	run(t, hosted(t, config{Objects: store{}}), []admitCase{
		{"create its own", Attributes{User: nodeA, Operation: admission.Create, Resource: resourceSlices, Name: "s", Object: own}, "", 0},
		{"delete its own", Attributes{User: nodeA, Operation: admission.Delete, Resource: resourceSlices, Name: "s", OldObject: own}, "", 0},
		{"create another's", Attributes{User: nodeA, Operation: admission.Create, Resource: resourceSlices, Name: "s", Object: other},
			`resourceslices.resource.k8s.io "s" is forbidden: can only create ResourceSlice with the same NodeName as the requesting node`, 0},
		{"create one for no node", Attributes{User: nodeA, Operation: admission.Create, Resource: resourceSlices, Name: "s", Object: none},
			"can only create ResourceSlice with the same NodeName as the requesting node", 0},
		{"delete another's", Attributes{User: nodeA, Operation: admission.Delete, Resource: resourceSlices, Name: "s", OldObject: other},
			"can only delete ResourceSlice with the same NodeName as the requesting node", 0},
		{"update, left to the Node authorizer", Attributes{User: nodeA, Operation: admission.Update, Resource: resourceSlices, Name: "s", Object: other, OldObject: other}, "", 0},
		{"admin creates another's", Attributes{User: admin, Operation: admission.Create, Resource: resourceSlices, Name: "s", Object: other}, "", 0},
	})
}

func csrPEM(t *testing.T, cn string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn, Organization: []string{"system:nodes"}}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// TestAdmitCSR: upstream's admitCSR.
func TestAdmitCSR(t *testing.T) {
	t.Parallel()
	own, other := csrPEM(t, "system:node:node-a"), csrPEM(t, "system:node:node-b")
	create := func(signer string, req []byte) Attributes {
		return Attributes{User: nodeA, Operation: admission.Create, Resource: csrs, Name: "c",
			Object: &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: signer, Request: req}}}
	}
	run(t, hosted(t, config{Objects: store{}}), []admitCase{
		{"serving, its own CN", create(certificatesv1.KubeletServingSignerName, own), "", 0},
		{"client, its own CN", create(certificatesv1.KubeAPIServerClientKubeletSignerName, own), "", 0},
		{"serving, another's CN", create(certificatesv1.KubeletServingSignerName, other),
			`certificatesigningrequests.certificates.k8s.io "c" is forbidden: can only create a node CSR with CN=system:node:node-a`, 0},
		{"client, another's CN", create(certificatesv1.KubeAPIServerClientKubeletSignerName, other), "can only create a node CSR with CN=system:node:node-a", 0},
		{"not a CSR", create(certificatesv1.KubeletServingSignerName, []byte("junk")), "unable to parse csr", 0},
		{"another signer", create("example.com/signer", other), "", 0},
		{"update (approval is not the node's)", Attributes{User: nodeA, Operation: admission.Update, Resource: csrs, Subresource: "approval", Name: "c",
			Object: create(certificatesv1.KubeletServingSignerName, other).Object, OldObject: create(certificatesv1.KubeletServingSignerName, other).Object}, "", 0},
	})
	run(t, hosted(t, config{Objects: store{}, Gates: gates(t, map[string]bool{"AllowInsecureKubeletCertificateSigningRequests": true})}), []admitCase{
		{"insecure CSRs allowed", create(certificatesv1.KubeletServingSignerName, other), "", 0},
	})
}

func pcr(pod, node string, podUID, nodeUID, saUID types.UID, sa, signer string) Attributes {
	return Attributes{User: nodeA, Operation: admission.Create, Resource: pcrs, Namespace: "default", Name: "r",
		Object: &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "r"}, Spec: certificatesv1.PodCertificateRequestSpec{
			SignerName: signer, PodName: pod, PodUID: podUID, ServiceAccountName: sa, ServiceAccountUID: saUID, NodeName: types.NodeName(node), NodeUID: nodeUID,
		}}}
}

// TestAdmitPodCertificateRequest: upstream's admitPodCertificateRequest
// (PodCertificateRequest is GA and on in 1.37).
func TestAdmitPodCertificateRequest(t *testing.T) {
	t.Parallel()
	certVolume := corev1.Volume{Name: "cert", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{{PodCertificate: &corev1.PodCertificateProjection{SignerName: "example.com/mounted", KeyType: "ED25519"}}},
	}}}
	mirror := podWith("mirror", "node-a", "uid-mirror", certVolume)
	mirror.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"}
	na := node("node-a", nil)
	na.UID = "uid-node-a"
	objs := store{
		key(nodes, "", "node-a"):                   na,
		key(pods, "default", "mine"):               podWith("mine", "node-a", "uid-mine", certVolume),
		key(pods, "default", "theirs"):             podWith("theirs", "node-b", "uid-theirs", certVolume),
		key(pods, "default", "mirror"):             mirror,
		key(serviceAccounts, "default", "default"): &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "default", UID: "uid-sa"}},
	}
	p := hosted(t, config{Objects: objs, Authorizer: granting("request-serviceaccounts-podcertificate-signer", "example.com:granted")})
	ok := func(pod string, podUID types.UID, signer string) Attributes {
		return pcr(pod, "node-a", podUID, "uid-node-a", "uid-sa", "default", signer)
	}
	update := ok("mine", "uid-mine", "example.com/mounted")
	update.Operation, update.OldObject = admission.Update, update.Object
	status := ok("mine", "uid-mine", "example.com/mounted")
	status.Operation, status.Subresource, status.OldObject = admission.Update, "status", status.Object
	created := ok("mine", "uid-mine", "example.com/mounted")
	created.Subresource = "status"
	run(t, p, []admitCase{
		{"its pod, a mounted signer", ok("mine", "uid-mine", "example.com/mounted"), "", 0},
		{"its pod, a granted signer", ok("mine", "uid-mine", "example.com/granted"), "", 0},
		{"its pod, another signer", ok("mine", "uid-mine", "example.com/other"),
			`pod "default/mine" does not mount a podCertificate projected volume for signer "example.com/other"`, 0},
		{"another node named", pcr("mine", "node-b", "uid-mine", "uid-node-a", "uid-sa", "default", "example.com/mounted"),
			`PodCertificateRequest.Spec.NodeName="node-b", which is not the requesting node "node-a"`, 0},
		{"a stale node UID", pcr("mine", "node-a", "uid-mine", "uid-old", "uid-sa", "default", "example.com/mounted"),
			`PodCertificateRequest for pod "default/mine" names node UID "uid-old", inconsistent with the running node ("uid-node-a")`, -1},
		{"no such pod", ok("gone", "uid-gone", "example.com/mounted"), `while retrieving pod "default/gone" named in the PodCertificateRequest`, -1},
		{"a stale pod UID", ok("mine", "uid-old", "example.com/mounted"), `contains pod UID ("uid-old") which differs from running pod "uid-mine"`, -1},
		{"another node's pod", ok("theirs", "uid-theirs", "example.com/mounted"), `pod "default/theirs" is not running on node "node-a" named in the PodCertificateRequest`, 0},
		{"a mirror pod", ok("mirror", "uid-mirror", "example.com/mounted"), `pod "default/mirror" is a mirror pod`, 0},
		{"another service account", pcr("mine", "node-a", "uid-mine", "uid-node-a", "uid-sa", "other", "example.com/mounted"),
			`contains serviceAccountName ("other") that differs from running pod ("default")`, 0},
		{"a stale service account UID", pcr("mine", "node-a", "uid-mine", "uid-node-a", "uid-old", "default", "example.com/mounted"),
			`names service account UID "uid-old", which differs from the running service account ("uid-sa")`, -1},
		{"an update", update, "unexpected operation UPDATE", 0},
		{"its status", status, "unexpected operation UPDATE", 0},
		{"a create on a subresource", created, "unexpected subresource status", 0},
	})
}

// TestAdmitPodStatusClaims: upstream's admitPodStatus keeps the
// resource claims' statuses (DynamicResourceAllocation, locked on).
func TestAdmitPodStatusClaims(t *testing.T) {
	t.Parallel()
	with := func(mod func(*corev1.PodStatus)) Attributes {
		old, obj := pod("p", "node-a", nil, nil), pod("p", "node-a", nil, nil)
		mod(&obj.Status)
		return Attributes{User: nodeA, Operation: admission.Update, Resource: pods, Subresource: "status", Namespace: "default", Name: "p", Object: obj, OldObject: old}
	}
	run(t, hosted(t, config{Objects: store{}}), []admitCase{
		{"phase", with(func(s *corev1.PodStatus) { s.Phase = corev1.PodRunning }), "", 0},
		{"resource claim statuses", with(func(s *corev1.PodStatus) {
			s.ResourceClaimStatuses = []corev1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: ptr.To("other")}}
		}), `node "node-a" cannot update resource claim statues`, 0},
		{"extended resource claim status", with(func(s *corev1.PodStatus) {
			s.ExtendedResourceClaimStatus = &corev1.PodExtendedResourceClaimStatus{ResourceClaimName: "other"}
		}), `node "node-a" cannot update extended resource claim status`, 0},
		{"node allocatable resource claim statuses", with(func(s *corev1.PodStatus) {
			s.NodeAllocatableResourceClaimStatuses = []corev1.NodeAllocatableResourceClaimStatus{{ResourceClaimName: "other"}}
		}), `node "node-a" cannot update node allocatable resource claim statuses`, 0},
	})
}

// TestAdmitPodEviction: upstream's admitPodEviction, on the create of
// pods/eviction, reading the pod.
func TestAdmitPodEviction(t *testing.T) {
	t.Parallel()
	objs := store{
		key(pods, "default", "mine"):   pod("mine", "node-a", nil, nil),
		key(pods, "default", "theirs"): pod("theirs", "node-b", nil, nil),
	}
	evict := func(url, body string) Attributes {
		return Attributes{User: nodeA, Operation: admission.Create, Resource: pods, Subresource: "eviction", Namespace: "default", Name: url,
			Object: &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: body}}}
	}
	run(t, hosted(t, config{Objects: objs}), []admitCase{
		{"its pod", evict("mine", "mine"), "", 0},
		{"another node's pod", evict("theirs", "theirs"), `pods "theirs" is forbidden: node node-a can only evict pods with spec.nodeName set to itself`, 0},
		{"the URL's name wins", evict("theirs", "mine"), "can only evict pods with spec.nodeName set to itself", 0},
		{"the body's name without the URL's", evict("", "theirs"), "can only evict pods with spec.nodeName set to itself", 0},
		{"no name at all", evict("", ""), "could not determine pod from request data", 0},
		// The lister's NotFound names the resource in the singular.
		{"no such pod", evict("gone", "gone"), `pod "gone" not found`, 404},
		// Upstream sees kube's internal types.
		{"not an eviction", Attributes{User: nodeA, Operation: admission.Create, Resource: pods, Subresource: "eviction", Namespace: "default", Name: "mine", Object: &corev1.Pod{}},
			"unexpected type *core.Pod", 0},
	})
}
