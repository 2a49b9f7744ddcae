package printers

import "k8s.io/apimachinery/pkg/runtime/schema"

// The core/v1 kinds the controllers' informers list (issue 19), printed by
// upstream's handlers (upstreamPrinter).

func persistentVolumePrinter() Printer {
	return upstreamPrinter(schema.GroupKind{Kind: "PersistentVolume"})
}

func persistentVolumeClaimPrinter() Printer {
	return upstreamPrinter(schema.GroupKind{Kind: "PersistentVolumeClaim"})
}

func resourceQuotaPrinter() Printer { return upstreamPrinter(schema.GroupKind{Kind: "ResourceQuota"}) }

// limitRangePrinter: kube-apiserver has no handler for LimitRanges and
// prints them with its default table convertor.
func limitRangePrinter() Printer {
	return createdAtPrinter(schema.GroupResource{Resource: "limitranges"})
}
