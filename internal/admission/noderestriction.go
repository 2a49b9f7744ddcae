package admission

import (
	kadmission "k8s.io/apiserver/pkg/admission"

	"github.com/dnsplane/dnsplane/internal/admission/noderestriction"
)

// newNodeRestriction is kube's NodeRestriction, upstream's plugin itself
// (internal/admission/noderestriction hosts it over the served objects), on
// every write by a node agent: creates, updates and deletes of the main
// resource and creates on subresources (tokens, evictions, bindings). A
// write with no user passes, as the plugin judges only nodes.
func newNodeRestriction(p *noderestriction.Plugin) kadmission.Interface {
	if p == nil {
		return nil
	}
	return p
}
