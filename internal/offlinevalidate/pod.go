package offlinevalidate

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dnsplane/dnsplane/api"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

// ErrInvalid is returned with the findings of a manifest that fails
// validation.
var ErrInvalid = errors.New("invalid manifest")

// Pod reads the first object of src, validates it like ValidateSource and
// returns the pod it describes: the Pod itself, or for a pod template carrier
// (Deployment, Job, …) a Pod built from its template in the object's
// namespace. Findings are returned with ErrInvalid when the object is invalid.
func (v Validator) Pod(ctx context.Context, src Source) (*dpcorev1.Pod, []Finding, error) {
	objs := v.ValidateSource(ctx, src)
	if len(objs) == 0 {
		return nil, nil, fmt.Errorf("%s: no objects", src.Name)
	}
	first := objs[0]
	if first.Status == Invalid {
		return nil, first.Findings, ErrInvalid
	}
	if first.Status == Skipped {
		return nil, nil, fmt.Errorf("%s: %s %s is not a kind dnsplane serves", src.Name, first.APIVersion, first.Kind)
	}
	pod, err := podOf(first.Value, first.Kind)
	return pod, nil, err
}

func podOf(obj any, kind string) (*dpcorev1.Pod, error) {
	if p, ok := obj.(*dpcorev1.Pod); ok {
		return p, nil
	}
	specs := api.PodSpecs(obj)
	if len(specs) == 0 {
		return nil, fmt.Errorf("a %s has no pod spec: pass a Pod or an object with a pod template", kind)
	}
	meta, _ := obj.(interface {
		GetName() string
		GetNamespace() string
	})
	pod := &dpcorev1.Pod{Spec: *specs[0].Spec}
	pod.Namespace = meta.GetNamespace()
	pod.Name = strings.ToLower(kind) + "-" + meta.GetName()
	return pod, nil
}
