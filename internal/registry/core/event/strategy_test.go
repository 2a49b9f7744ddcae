package event_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
)

// TestFieldSelectors: the selectors kubectl describe sends to find an
// object's events (involvedObject.name, .namespace, .kind, .uid) and the
// others upstream offers select the right events through the real server.
func TestFieldSelectors(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server")
	}
	ts := controlplanetest.StartTestServer(t, controlplane.Config{})
	ctx := t.Context()
	events := ts.Client.CoreV1().Events("default")
	for _, e := range []struct{ name, obj, kind, reason, typ, source string }{
		{"a", "web", "Pod", "Scheduled", corev1.EventTypeNormal, "scheduler"},
		{"b", "web", "Pod", "DNSConfigForming", corev1.EventTypeWarning, "kubelet"},
		{"c", "db", "Pod", "Scheduled", corev1.EventTypeNormal, "scheduler"},
		{"d", "web", "Service", "Created", corev1.EventTypeNormal, ""},
	} {
		ev := &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: e.name},
			InvolvedObject: corev1.ObjectReference{Kind: e.kind, Namespace: "default", Name: e.obj, UID: types.UID("uid-" + e.obj)},
			Reason:         e.reason, Type: e.typ, Message: "m", Source: corev1.EventSource{Component: e.source},
			ReportingController: "dnsplane.io/test",
		}
		if _, err := events.Create(ctx, ev, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating event %s: %v", e.name, err)
		}
	}
	tests := []struct {
		selector string
		want     []string
	}{
		// What kubectl describe pod web sends.
		{"involvedObject.name=web,involvedObject.namespace=default,involvedObject.kind=Pod,involvedObject.uid=uid-web", []string{"a", "b"}},
		{"involvedObject.name=web", []string{"a", "b", "d"}},
		{"reason=Scheduled", []string{"a", "c"}},
		{"type=Warning", []string{"b"}},
		{"source=scheduler", []string{"a", "c"}},
		{"source=dnsplane.io/test", []string{"d"}}, // no source.component: the reporting controller
		{"reportingComponent=dnsplane.io/test,involvedObject.kind!=Pod", []string{"d"}},
	}
	for _, tt := range tests {
		list, err := events.List(ctx, metav1.ListOptions{FieldSelector: tt.selector})
		if err != nil {
			t.Errorf("%s: %v", tt.selector, err)
			continue
		}
		var got []string
		for _, e := range list.Items {
			got = append(got, e.Name)
		}
		if len(got) != len(tt.want) {
			t.Errorf("%s: got %v, want %v", tt.selector, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%s: got %v, want %v", tt.selector, got, tt.want)
				break
			}
		}
	}
}
