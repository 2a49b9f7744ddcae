// Package store owns the API server's writes, in the role of
// k8s.io/apiserver's generic registry Store
// (pkg/registry/generic/registry/store.go): one Store per served kind
// sequences every create, update and delete through the kind's strategy
// (internal/registry), the admission chain (internal/admission) and etcd
// (internal/storage), in one order:
//
//	create: namespace → generated name → server metadata, generation →
//	        strategy.PrepareForCreate → managed fields (the caller's) →
//	        mutating admission (which sees the name the request gave, as
//	        kube's generates it after) → validation → validating admission →
//	        reservations (Reserver) → etcd create
//	update: (read, resourceVersion precondition) → what the write may not
//	        change kept (PrepareForUpdate, the /status or object
//	        subresource's rules) → managed fields → mutating admission →
//	        generation → validation → validating admission → a delete when
//	        the last finalizer of a deleted object went → reservations →
//	        etcd compare-and-swap (nothing written when nothing changed)
//	delete: read → mutating admission → preconditions → the kind's
//	        delete stage, grace period, garbage collector finalizers
//	        (planDelete) → etcd mark or compare-and-swap delete → release
//
// The HTTP handlers (internal/apiserver) decode, negotiate, record managed
// fields and respond; everything between decoding and the answer is here.
// docs/apiserver.md, "Admission", prints the order for users.
package store
