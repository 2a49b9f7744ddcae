package apiserver

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// TestEventsBothGroupVersions: events.k8s.io/v1 and v1 Events are two
// views of the same stored objects, as in kube-apiserver: what one writes
// the other reads, lists and watches, with upstream's field mapping.
func TestEventsBothGroupVersions(t *testing.T) {
	ts := sharedServer(t)
	ctx := context.Background()
	ns := newNamespace(t, ts.client)
	core, ev1 := ts.client.CoreV1().Events(ns), ts.client.EventsV1().Events(ns)

	coreWatch, err := core.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer coreWatch.Stop()
	v1Watch, err := ev1.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer v1Watch.Stop()

	now := metav1.NewMicroTime(time.Now().Truncate(time.Microsecond))
	written, err := ev1.Create(ctx, &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "web.1"},
		EventTime:  now, ReportingController: "dnsplane.io/test", ReportingInstance: "test-1",
		Action: "Scheduling", Reason: "Scheduled", Type: corev1.EventTypeNormal, Note: "assigned",
		Regarding: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "web", APIVersion: "v1"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating through events.k8s.io/v1: %v", err)
	}
	legacy, err := core.Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "web.2"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "web"},
		Reason:         "BackOff", Message: "restarting", Type: corev1.EventTypeWarning,
		Source: corev1.EventSource{Component: "kubelet"}, Count: 3,
		FirstTimestamp: metav1.NewTime(now.Add(-time.Minute).Truncate(time.Second)), LastTimestamp: metav1.NewTime(now.Truncate(time.Second)),
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating through v1: %v", err)
	}

	t.Run("v1 reads events.k8s.io", func(t *testing.T) {
		got, err := core.Get(ctx, "web.1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Message != "assigned" || got.InvolvedObject.Name != "web" || !got.EventTime.Equal(&now) ||
			got.ReportingController != "dnsplane.io/test" || got.UID != written.UID || got.ResourceVersion != written.ResourceVersion {
			t.Errorf("got %+v", got)
		}
	})
	t.Run("events.k8s.io reads v1", func(t *testing.T) {
		got, err := ev1.Get(ctx, "web.2", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Note != "restarting" || got.Regarding.Name != "web" || got.DeprecatedCount != 3 ||
			got.DeprecatedSource.Component != "kubelet" || got.UID != legacy.UID {
			t.Errorf("got %+v", got)
		}
	})
	t.Run("lists", func(t *testing.T) {
		cl, err := core.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		vl, err := ev1.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(cl.Items) != 2 || len(vl.Items) != 2 || vl.Items[0].Regarding.Name != "web" || cl.Items[0].InvolvedObject.Name != "web" {
			t.Errorf("v1 list %d items, events.k8s.io list %d items: %+v", len(cl.Items), len(vl.Items), vl.Items)
		}
	})
	t.Run("updates through either view", func(t *testing.T) {
		// v1's legacy rules let the message change; events.k8s.io reads it.
		c, err := core.Get(ctx, "web.1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c.Message = "assigned to node-1"
		if _, err := core.Update(ctx, c, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("updating through v1: %v", err)
		}
		e, err := ev1.Get(ctx, "web.1", metav1.GetOptions{})
		if err != nil || e.Note != "assigned to node-1" {
			t.Fatalf("events.k8s.io after a v1 update: %+v, %v", e, err)
		}
		// events.k8s.io's strict rules: a series may start, the note is
		// immutable (ValidateEventUpdate with events.k8s.io/v1).
		e.Series = &eventsv1.EventSeries{Count: 2, LastObservedTime: metav1.NewMicroTime(time.Now())}
		if _, err := ev1.Update(ctx, e, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("updating the series through events.k8s.io/v1: %v", err)
		}
		if c, err := core.Get(ctx, "web.1", metav1.GetOptions{}); err != nil || c.Series == nil || c.Series.Count != 2 {
			t.Errorf("v1 after an events.k8s.io update: %+v, %v", c, err)
		}
		e, err = ev1.Get(ctx, "web.1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		e.Note = "changed"
		if _, err := ev1.Update(ctx, e, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || !hasCause(err, "message") {
			t.Errorf("changing the note through events.k8s.io/v1: %v, want 422 at message (upstream's path)", err)
		}
	})
	t.Run("watches", func(t *testing.T) {
		for _, w := range []struct {
			name string
			w    watch.Interface
			want func(any) bool
		}{
			{"v1", coreWatch, func(o any) bool {
				e, ok := o.(*corev1.Event)
				return ok && e.Name == "web.1" && e.Message == "assigned"
			}},
			{"events.k8s.io", v1Watch, func(o any) bool {
				e, ok := o.(*eventsv1.Event)
				return ok && e.Name == "web.2" && e.Note == "restarting"
			}},
		} {
			seen := false
			timeout := time.After(10 * time.Second)
			for !seen {
				select {
				case e := <-w.w.ResultChan():
					seen = e.Type == watch.Added && w.want(e.Object)
				case <-timeout:
					t.Fatalf("%s watch: no ADDED event of the other view's write", w.name)
				}
			}
		}
	})
}

// TestEventsV1Validation: events.k8s.io/v1 writes get upstream's strict
// rules (ValidateEventCreate with the request's group version), v1 writes
// the legacy ones, as kube-apiserver's one Event strategy does.
func TestEventsV1Validation(t *testing.T) {
	ts := sharedServer(t)
	ctx := context.Background()
	ns := newNamespace(t, ts.client)
	now := metav1.NewMicroTime(time.Now())
	valid := func() *eventsv1.Event {
		return &eventsv1.Event{
			ObjectMeta: metav1.ObjectMeta{Name: "e"},
			EventTime:  now, ReportingController: "dnsplane.io/test", ReportingInstance: "test-1",
			Action: "Do", Reason: "Done", Type: corev1.EventTypeNormal,
			Regarding: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "web"},
		}
	}
	tests := []struct {
		name   string
		mutate func(*eventsv1.Event)
		field  string
	}{
		{"eventTime required", func(e *eventsv1.Event) { e.EventTime = metav1.MicroTime{} }, "eventTime"},
		{"type Normal or Warning", func(e *eventsv1.Event) { e.Type = "Other" }, "type"},
		{"deprecated count unset", func(e *eventsv1.Event) { e.DeprecatedCount = 2 }, "count"},
		{"deprecated source unset", func(e *eventsv1.Event) { e.DeprecatedSource.Component = "kubelet" }, "source"},
		{"reportingController required", func(e *eventsv1.Event) { e.ReportingController = "" }, "reportingController"},
		{"action required", func(e *eventsv1.Event) { e.Action = "" }, "action"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := valid()
			tt.mutate(e)
			_, err := ts.client.EventsV1().Events(ns).Create(ctx, e, metav1.CreateOptions{})
			if !apierrors.IsInvalid(err) || !hasCause(err, tt.field) {
				t.Errorf("got %v, want 422 with a cause at %s", err, tt.field)
			}
		})
	}
	// The legacy rules of v1 take an Event without eventTime or action.
	if _, err := ts.client.CoreV1().Events(ns).Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "legacy"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "web"},
		Reason:         "BackOff", Type: corev1.EventTypeWarning, Count: 2,
	}, metav1.CreateOptions{}); err != nil {
		t.Errorf("v1 Event with legacy fields: %v", err)
	}
}

func hasCause(err error, field string) bool {
	var se *apierrors.StatusError
	if !errors.As(err, &se) || se.ErrStatus.Details == nil {
		return false
	}
	for _, c := range se.ErrStatus.Details.Causes {
		if c.Field == field {
			return true
		}
	}
	return false
}
