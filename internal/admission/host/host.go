// Package host is what kube-apiserver's admission chain does around an
// upstream plugin that dnsplane hosts over its served objects
// (internal/admission/noderestriction, internal/admission/priority): the
// request's objects converted to kube's internal types, which upstream's
// plugins type-assert, and a write that reads informers waiting until they
// have listed, as kube's plugins with a ReadyFunc do
// (admission.Handler.WaitForReady).
package host

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/admission"
)

// ReadyTimeout is how long a write waits for a plugin's informers before
// it is refused: kube's timeToWaitForReady (k8s.io/apiserver/pkg/admission,
// handler.go).
const ReadyTimeout = 10 * time.Second

// ErrNotReady is kube's message for a plugin whose informers have not
// synced (admission.Handler.WaitForReady's callers, NamespaceLifecycle's
// among them).
var ErrNotReady = errors.New("not yet ready to handle request")

// Attributes is a with its object and old object passed through convert
// (nil stays nil), as kube-apiserver's handlers decode to internal types
// before admission.
func Attributes(a admission.Attributes, convert func(runtime.Object) (runtime.Object, error)) (admission.Attributes, error) {
	var objs [2]runtime.Object
	for i, obj := range []runtime.Object{a.GetObject(), a.GetOldObject()} {
		if obj == nil {
			continue
		}
		out, err := convert(obj)
		if err != nil {
			return nil, err
		}
		objs[i] = out
	}
	return admission.NewAttributesRecord(objs[0], objs[1], a.GetKind(), a.GetNamespace(), a.GetName(), a.GetResource(),
		a.GetSubresource(), a.GetOperation(), a.GetOperationOptions(), a.IsDryRun(), a.GetUserInfo()), nil
}

// WaitSynced waits until synced reports true, up to ReadyTimeout and ctx,
// and is ErrNotReady otherwise; initErr, the plugin's
// ValidateInitialization, is ErrNotReady at once. kube-apiserver keeps
// /readyz failing until its informers sync (the informer-sync check), so
// load-balanced clients do not meet an unsynced plugin; `up`'s agents dial
// the server directly, so here the request waits instead.
func WaitSynced(ctx context.Context, initErr error, synced func() bool) error {
	if initErr != nil {
		return fmt.Errorf("%w: %w", ErrNotReady, initErr)
	}
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, ReadyTimeout, true, func(context.Context) (bool, error) {
		return synced(), nil
	})
	if err != nil {
		return ErrNotReady
	}
	return nil
}
