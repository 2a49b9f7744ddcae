package printers

import "k8s.io/apimachinery/pkg/runtime/schema"

var priorityClassKind = schema.GroupKind{Group: "scheduling.k8s.io", Kind: "PriorityClass"}

// priorityClassPrinter prints scheduling.k8s.io/v1 PriorityClasses with
// upstream's handler (upstreamPrinter).
func priorityClassPrinter() Printer { return upstreamPrinter(priorityClassKind) }
