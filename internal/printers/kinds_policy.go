package printers

import "k8s.io/apimachinery/pkg/runtime/schema"

var pdbKind = schema.GroupKind{Group: "policy", Kind: "PodDisruptionBudget"}

// podDisruptionBudgetPrinter prints policy/v1 PodDisruptionBudgets with
// upstream's handler (upstreamPrinter).
func podDisruptionBudgetPrinter() Printer { return upstreamPrinter(pdbKind) }
