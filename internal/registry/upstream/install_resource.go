package upstream

import (
	// The resource.k8s.io API group (issue 19), registered in
	// legacyscheme.Scheme with its defaulting, conversion and declarative
	// validation.
	_ "k8s.io/kubernetes/pkg/apis/resource/install"
)
