package registry

import "k8s.io/apimachinery/pkg/runtime/schema"

// Group kinds of the API groups added for kube-controller-manager and
// kube-scheduler (issue 19), as short keys of the Strategies map.

func storageKind(kind string) schema.GroupKind {
	return schema.GroupKind{Group: "storage.k8s.io", Kind: kind}
}

// rbacKind names an RBAC kind.
func rbacKind(kind string) schema.GroupKind {
	return schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: kind}
}

func resourceKind(kind string) schema.GroupKind {
	return schema.GroupKind{Group: "resource.k8s.io", Kind: kind}
}

func storageMigrationKind(kind string) schema.GroupKind {
	return schema.GroupKind{Group: "storagemigration.k8s.io", Kind: kind}
}

// admissionKind names an admission policy kind. Policies are stored and
// validated only: no admission runs them (docs/apiserver.md).
func admissionKind(kind string) schema.GroupKind {
	return schema.GroupKind{Group: "admissionregistration.k8s.io", Kind: kind}
}
