package apiserver

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestEndpointsDeprecationWarning: every request for v1 Endpoints carries
// the Warning kube-apiserver 1.37 sends for the kind (its
// APILifecycleDeprecated, through k8s.io/apiserver's deprecation
// package), errors included; other kinds carry none.
func TestEndpointsDeprecationWarning(t *testing.T) {
	t.Parallel()
	ts := sharedServer(t)
	ctx := context.Background()
	ns := newNamespace(t, ts.client)
	const want = `299 - "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"`
	rc := ts.client.CoreV1().RESTClient()
	body := []byte(`{"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"web"}}`)
	for _, tc := range []struct {
		name, verb, path string
		body             []byte
		want             []string
	}{
		{"create", "POST", "/api/v1/namespaces/" + ns + "/endpoints", body, []string{want}},
		{"get", "GET", "/api/v1/namespaces/" + ns + "/endpoints/web", nil, []string{want}},
		{"list", "GET", "/api/v1/endpoints", nil, []string{want}},
		{"not found", "GET", "/api/v1/namespaces/" + ns + "/endpoints/nope", nil, []string{want}},
		{"delete", "DELETE", "/api/v1/namespaces/" + ns + "/endpoints/web", nil, []string{want}},
		{"other kind", "GET", "/api/v1/namespaces/" + ns + "/configmaps", nil, nil},
		{"endpointslices", "GET", "/apis/discovery.k8s.io/v1/namespaces/" + ns + "/endpointslices", nil, nil},
	} {
		req := rc.Verb(tc.verb).AbsPath(tc.path)
		if tc.body != nil {
			req = req.SetHeader("Content-Type", "application/json").Body(tc.body)
		}
		res := req.Do(ctx)
		var got []string
		for _, w := range res.Warnings() {
			got = append(got, `299 - "`+w.Text+`"`)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: warnings %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestEventsV1Errors: errors about events.k8s.io/v1 Events name them as
// kube-apiserver does: by the request's group and resource where it
// answers from its storage (not found, already exists), and as the kind its
// strategy reports, core Event, where validation refuses one.
func TestEventsV1Errors(t *testing.T) {
	t.Parallel()
	ts := sharedServer(t)
	ctx := context.Background()
	ns := newNamespace(t, ts.client)
	ev := ts.client.EventsV1().Events(ns)
	if _, err := ev.Get(ctx, "nope", metav1.GetOptions{}); err == nil || err.Error() != `events.events.k8s.io "nope" not found` {
		t.Errorf("get: %v", err)
	}
	_, err := ev.Create(ctx, &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: "bad"}}, metav1.CreateOptions{})
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		t.Fatalf("create: %v", err)
	}
	if d := status.Status().Details; d.Group != "" || d.Kind != "Event" || !strings.HasPrefix(err.Error(), `Event "bad" is invalid: `) {
		t.Errorf("create: %v (group %q, kind %q)", err, d.Group, d.Kind)
	}
	good := &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: "good"}, EventTime: metav1.NowMicro(),
		ReportingController: "dnsplane.io/test", ReportingInstance: "test-1", Action: "Test", Reason: "Test", Type: corev1.EventTypeNormal,
		Regarding: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "web", APIVersion: "v1"}}
	if _, err := ev.Create(ctx, good, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ev.Create(ctx, good, metav1.CreateOptions{}); err == nil || err.Error() != `events.events.k8s.io "good" already exists` {
		t.Errorf("create again: %v", err)
	}
}
