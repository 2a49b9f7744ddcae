package printers

import "k8s.io/apimachinery/pkg/runtime/schema"

// controllerRevisionPrinter prints apps/v1 ControllerRevisions with
// upstream's handler (upstreamPrinter).
func controllerRevisionPrinter() Printer {
	return upstreamPrinter(schema.GroupKind{Group: "apps", Kind: "ControllerRevision"})
}
