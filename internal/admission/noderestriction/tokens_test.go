package noderestriction

import (
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/admission"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

func podWith(name, node string, uid types.UID, volumes ...corev1.Volume) *dpcorev1.Pod {
	p := pod(name, node, nil, nil)
	p.UID = uid
	p.Spec.ServiceAccountName = "default"
	p.Spec.Volumes = volumes
	return p
}

func projectedToken(audience string) corev1.Volume {
	return corev1.Volume{Name: "token-" + audience, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Audience: audience, Path: "token"}}},
	}}}
}

func csiDriver(name, audience string) *storagev1.CSIDriver {
	return &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: storagev1.CSIDriverSpec{TokenRequests: []storagev1.TokenRequest{{Audience: audience}}}}
}

func claim(name, volume string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Spec: corev1.PersistentVolumeClaimSpec{VolumeName: volume}}
}

func csiVolume(name, driver string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeSpec{
		PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: name}}}}
}

func tokenStore() store {
	volumes := []corev1.Volume{
		{Name: "inline", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "inline.example.com"}}},
		{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
		{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{}}}},
		{Name: "disk", VolumeSource: corev1.VolumeSource{GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{PDName: "disk"}}},
	}
	objs := map[string]runtime.Object{
		key(pods, "default", "mine"):                 podWith("mine", "node-a", "uid-mine", projectedToken(""), projectedToken("vault")),
		key(pods, "default", "bare"):                 podWith("bare", "node-a", "uid-bare"),
		key(pods, "default", "volumes"):              podWith("volumes", "node-a", "uid-volumes", volumes...),
		key(pods, "default", "theirs"):               podWith("theirs", "node-b", "uid-theirs", projectedToken("")),
		key(pvcs, "default", "data"):                 claim("data", "pv-data"),
		key(pvcs, "default", "volumes-scratch"):      claim("volumes-scratch", "pv-scratch"),
		key(pvs, "", "pv-data"):                      csiVolume("pv-data", "pvc.example.com"),
		key(pvs, "", "pv-scratch"):                   csiVolume("pv-scratch", "ephemeral.example.com"),
		key(csiDrivers, "", "inline.example.com"):    csiDriver("inline.example.com", "inline-aud"),
		key(csiDrivers, "", "pvc.example.com"):       csiDriver("pvc.example.com", "pvc-aud"),
		key(csiDrivers, "", "ephemeral.example.com"): csiDriver("ephemeral.example.com", "ephemeral-aud"),
		key(csiDrivers, "", "pd.csi.storage.gke.io"): csiDriver("pd.csi.storage.gke.io", "gce-aud"),
	}
	return objs
}

func tokenFor(ref *authenticationv1.BoundObjectReference, audiences ...string) Attributes {
	return Attributes{
		User: nodeA, Operation: admission.Create, Resource: serviceAccounts, Subresource: "token", Namespace: "default", Name: "default",
		Object: &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: ref, Audiences: audiences}},
	}
}

func podRef(name string, uid types.UID) *authenticationv1.BoundObjectReference {
	return &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: name, UID: uid}
}

// TestAdmitServiceAccountToken: upstream's admitServiceAccount and the
// ServiceAccountNodeAudienceRestriction (on by default in 1.37).
func TestAdmitServiceAccountToken(t *testing.T) {
	t.Parallel()
	p := hosted(t, config{Objects: tokenStore(), Authorizer: granting("request-serviceaccounts-token-audience", "granted-aud")})
	adminToken := tokenFor(nil)
	adminToken.User = admin
	run(t, p, []admitCase{
		{"admin, unbound", adminToken, "", 0},
		{"unbound", tokenFor(nil), "node requested token not bound to a pod", 0},
		{"bound to a secret", tokenFor(&authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Secret", Name: "s", UID: "u"}), "node requested token not bound to a pod", 0},
		{"bound to a node", tokenFor(&authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Node", Name: "node-a", UID: "u"}), "node requested token not bound to a pod", 0},
		{"pod without a name", tokenFor(podRef("", "uid-mine")), "node requested token not bound to a pod", 0},
		{"pod without a uid", tokenFor(podRef("mine", "")), "node requested token with a pod binding without a uid", 0},
		{"no such pod", tokenFor(podRef("gone", "uid-gone")), `pod "gone" not found`, 404},
		{"stale uid", tokenFor(podRef("mine", "uid-old")), "the UID in the bound object reference (uid-old) does not match the UID in record. The object might have been deleted and then recreated", 0},
		{"another node's pod", tokenFor(podRef("theirs", "uid-theirs")), "node requested token bound to a pod scheduled on a different node", 0},
		{"its pod, default audience", tokenFor(podRef("mine", "uid-mine")), "", 0},
		{"its pod, a projected audience", tokenFor(podRef("mine", "uid-mine"), "vault"), "", 0},
		{"its pod, an audience no volume uses", tokenFor(podRef("mine", "uid-mine"), "other"), `system:node:node-a is not authorized to request tokens for audience "other"`, 0},
		{"its pod, two audiences", tokenFor(podRef("mine", "uid-mine"), "", "vault"), "node may only request 0 or 1 audiences", 0},
		{"a pod with no token volume", tokenFor(podRef("bare", "uid-bare")), `system:node:node-a is not authorized to request tokens for audience ""`, 0},
		{"a granted audience", tokenFor(podRef("bare", "uid-bare"), "granted-aud"), "", 0},
		{"an inline CSI driver's audience", tokenFor(podRef("volumes", "uid-volumes"), "inline-aud"), "", 0},
		{"a PVC's CSI driver's audience", tokenFor(podRef("volumes", "uid-volumes"), "pvc-aud"), "", 0},
		{"an ephemeral volume's CSI driver's audience", tokenFor(podRef("volumes", "uid-volumes"), "ephemeral-aud"), "", 0},
		{"a migrated in-tree volume's CSI driver's audience", tokenFor(podRef("volumes", "uid-volumes"), "gce-aud"), "", 0},
		{"no volume's driver has it", tokenFor(podRef("volumes", "uid-volumes"), "nope"), `not authorized to request tokens for audience "nope"`, 0},
		{"an update of the service account", Attributes{User: nodeA, Operation: admission.Update, Resource: serviceAccounts, Namespace: "default", Name: "default",
			Object: &corev1.ServiceAccount{}, OldObject: &corev1.ServiceAccount{}}, "", 0},
	})

	// Without the audience restriction, any audience for its own pod.
	run(t, hosted(t, config{Objects: tokenStore(), Gates: gates(t, map[string]bool{"ServiceAccountNodeAudienceRestriction": false})}), []admitCase{
		{"gate off, any audience", tokenFor(podRef("bare", "uid-bare"), "other"), "", 0},
		{"gate off, still another node's pod", tokenFor(podRef("theirs", "uid-theirs")), "scheduled on a different node", 0},
	})
}
