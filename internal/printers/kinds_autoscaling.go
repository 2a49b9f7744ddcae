package printers

import "k8s.io/apimachinery/pkg/runtime/schema"

var hpaKind = schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}

// horizontalPodAutoscalerPrinter prints autoscaling/v2
// HorizontalPodAutoscalers with upstream's handler (upstreamPrinter).
func horizontalPodAutoscalerPrinter() Printer { return upstreamPrinter(hpaKind) }
