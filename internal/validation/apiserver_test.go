package validation_test

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
	"github.com/dnsplane/dnsplane/internal/resolvconf"
)

// TestAPIServerRefusesMultiLineOptions: the API server refuses a pod, and
// a Deployment's template, whose DNS options would add lines to the pod's
// resolv.conf, with a 422 naming the field (issue 29: it stored them, and
// the node agent then refused the pod for ever).
func TestAPIServerRefusesMultiLineOptions(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts an API server")
	}
	ts := controlplanetest.StartTestServer(t, controlplane.Config{})
	client := dynamic.NewForConfigOrDie(ts.ClientConfig)
	ctx := context.Background()
	containers := []any{map[string]any{"name": "c", "image": "i"}}
	podSpec := func(dns map[string]any) map[string]any {
		s := map[string]any{"containers": containers}
		for k, v := range dns {
			s[k] = v
		}
		return s
	}
	for _, tc := range []struct {
		name     string
		resource schema.GroupVersionResource
		obj      map[string]any
		want     string
	}{
		{"pod dnsParams option", schema.GroupVersionResource{Version: "v1", Resource: "pods"}, map[string]any{
			"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p"},
			"spec": podSpec(map[string]any{"dnsPolicy": "Custom", "dnsParams": map[string]any{"custom": map[string]any{
				"options": []any{"rotate", "edns0\nnameserver 6.6.6.6"}}}}),
		}, `Pod "p" is invalid: spec.dnsParams.custom.options[1]: Invalid value: "edns0\nnameserver 6.6.6.6": ` + resolvconf.MsgNotOneWord},
		{"deployment dnsConfig option value", schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "d"},
			"spec": map[string]any{
				"selector": map[string]any{"matchLabels": map[string]any{"a": "b"}},
				"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "b"}},
					"spec": podSpec(map[string]any{"dnsConfig": map[string]any{"options": []any{
						map[string]any{"name": "timeout", "value": "1\nnameserver 6.6.6.6"}}}})},
			},
		}, `Deployment.apps "d" is invalid: spec.template.spec.dnsConfig.options[0].value: Invalid value: "1\nnameserver 6.6.6.6": ` + resolvconf.MsgNotOneWord},
	} {
		_, err := client.Resource(tc.resource).Namespace("default").Create(ctx, &unstructured.Unstructured{Object: tc.obj}, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || err.Error() != tc.want {
			t.Errorf("%s: create: %v,\nwant 422 %s", tc.name, err, tc.want)
		}
	}
}
