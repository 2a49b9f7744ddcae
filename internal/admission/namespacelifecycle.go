package admission

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
)

// NewNamespaceLifecycle is kube-apiserver's NamespaceLifecycle, upstream's
// plugin itself, with kube's immortal namespaces (default, kube-system,
// kube-public may not be deleted): a create in a missing namespace gets
// the namespace's 404, one in a terminating namespace a 403 with the
// NamespaceTerminating cause. It reads namespaces from f's informer, so a
// create costs no storage read (issue 32; docs/apiserver.md, "Reads on the
// write path"); on a miss it waits 50 ms for the informer and then asks
// client, the server's loopback client, as kube does for a namespace
// created a moment ago, and after a namespace's delete it asks client
// until the informer has seen the namespace terminate. f must be started
// by the caller; until its namespace informer has synced, creates wait
// (10 s at most, then 403 "not yet ready to handle request").
func NewNamespaceLifecycle(client kubernetes.Interface, f informers.SharedInformerFactory) (*lifecycle.Lifecycle, error) {
	l, err := lifecycle.NewLifecycle(sets.New(metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic))
	if err != nil {
		return nil, fmt.Errorf("namespace lifecycle: %w", err)
	}
	// What kube-apiserver's plugin initializer gives it.
	l.SetExternalKubeInformerFactory(f)
	l.SetExternalKubeClientSet(client)
	if err := l.ValidateInitialization(); err != nil {
		return nil, fmt.Errorf("namespace lifecycle: %w", err)
	}
	return l, nil
}
