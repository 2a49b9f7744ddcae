package offlinevalidate

import (
	"context"
	"fmt"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
)

// DNS reads the first object of src, validates it like ValidateSource and
// returns it, defaulted as the API server would store it. It must be an
// operator.dnsplane.io/v1 DNS. Findings are returned with ErrInvalid when
// it is invalid.
func (v Validator) DNS(ctx context.Context, src Source) (*operatorv1.DNS, []Finding, error) {
	objs := v.ValidateSource(ctx, src)
	if len(objs) == 0 {
		return nil, nil, fmt.Errorf("%s: no objects", src.Name)
	}
	first := objs[0]
	if first.Status == Invalid {
		return nil, first.Findings, ErrInvalid
	}
	dns, ok := first.Value.(*operatorv1.DNS)
	if !ok {
		return nil, nil, fmt.Errorf("%s: %s %s is not a DNS (apiVersion %s/v1, kind DNS)", src.Name, first.APIVersion, first.Kind, operatorv1.GroupName)
	}
	return dns, nil, nil
}
