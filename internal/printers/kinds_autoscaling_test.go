package printers

import (
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/dnsplane/dnsplane/api"
)

// TestTableHPAv1 prints autoscaling/v1 HorizontalPodAutoscalers, a view of
// the v2 objects, with the v2 printer after upstream's conversion: the CPU
// target and current utilisation become a resource metric.
func TestTableHPAv1(t *testing.T) {
	t.Parallel()
	res, ok := api.Lookup(schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "HorizontalPodAutoscaler"})
	if !ok {
		t.Fatal("autoscaling/v1 HorizontalPodAutoscaler is not served")
	}
	target, current, minReplicas := int32(80), int32(50), int32(2)
	checkRows(t, res, []tblCase{
		{"cpu", &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: tblMeta("h", time.Hour), Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{Kind: "Deployment", Name: "web", APIVersion: "apps/v1"},
			MinReplicas:    &minReplicas, MaxReplicas: 5, TargetCPUUtilizationPercentage: &target},
			Status: autoscalingv1.HorizontalPodAutoscalerStatus{CurrentReplicas: 3, CurrentCPUUtilizationPercentage: &current}},
			[]any{"h", "Deployment/web", "cpu: 50%/80%", "2", int64(5), int64(3), "60m"}},
		// v1's implicit CPU target, made explicit by upstream's conversion.
		{"no target", &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: tblMeta("h", time.Hour)},
			[]any{"h", "/", "cpu: <unknown>/80%", "<unset>", int64(0), int64(0), "60m"}},
	})
}
