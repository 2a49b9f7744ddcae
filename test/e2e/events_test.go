package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestKubectlEvents: an Event written through events.k8s.io/v1 is what
// `kubectl get events` (which resolves to v1 Events, as against
// kube-apiserver) and `kubectl events` show, and the other view lists it
// too: both are views of one stored object (docs/apiserver.md).
func TestKubectlEvents(t *testing.T) {
	requireKubectl(t)
	kc := sharedServer(t).Kubeconfig
	ns := newNamespace(t, kc)
	eventTime := time.Now().UTC().Add(-time.Minute).Format("2006-01-02T15:04:05.000000Z07:00")
	manifest := fmt.Sprintf(`apiVersion: events.k8s.io/v1
kind: Event
metadata:
  name: web.1
eventTime: %q
reportingController: dnsplane.io/e2e
reportingInstance: e2e-1
action: Scheduling
reason: Scheduled
type: Normal
note: assigned
regarding:
  apiVersion: v1
  kind: Pod
  name: web
  namespace: %s
`, eventTime, ns)
	wantKubectl(t, kc, manifest, ok("event.events.k8s.io/web.1 created"), "-n", ns, "create", "-f", "-")

	header := []string{"LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"}
	for _, tc := range []struct {
		args   []string
		object string
	}{
		{[]string{"get", "events"}, "pod/web"},
		{[]string{"get", "ev"}, "pod/web"},
		{[]string{"get", "events.v1.events.k8s.io"}, "pod/web"},
		// kubectl events prints the kind as it is (its own printer).
		{[]string{"events"}, "Pod/web"},
	} {
		args, row := tc.args, []string{"Normal", "Scheduled", tc.object, "assigned"}
		out := mustKubectl(t, kc, "", append([]string{"-n", ns}, args...)...)
		r := rows(out)
		// LAST SEEN is an age (one cell, e.g. 60s); the rest is fixed.
		if len(r) != 2 || !slices.Equal(r[0], header) || len(r[1]) != 5 || !slices.Equal(r[1][1:], row) {
			t.Errorf("kubectl %v:\n%s\nwant the header %q and one row ending %q", args, out, header, row)
		}
	}
	// The v1 view has upstream's field mapping of what was written.
	if got := jsonpath(t, kc, ns, "events", "web.1", "{.involvedObject.name} {.message} {.reportingComponent}"); got != "web assigned dnsplane.io/e2e" {
		t.Errorf("v1 view: %q", got)
	}
	wantKubectl(t, kc, "", ok(`event.events.k8s.io "web.1" deleted`), "-n", ns, "delete", "events.events.k8s.io", "web.1")
	wantKubectl(t, kc, "", run{stderr: "No resources found in " + ns + " namespace.\n"}, "-n", ns, "get", "events")
}
