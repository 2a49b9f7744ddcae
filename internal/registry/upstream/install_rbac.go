package upstream

import (
	// The rbac API group (issue 19), registered in legacyscheme.Scheme
	// with its defaulting, conversion and declarative validation.
	_ "k8s.io/kubernetes/pkg/apis/rbac/install"
)
