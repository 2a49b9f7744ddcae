package api

import (
	"encoding/json"
	"testing"

	dpappsv1 "github.com/dnsplane/dnsplane/api/apps/v1"
	dpbatchv1 "github.com/dnsplane/dnsplane/api/batch/v1"
)

func decodeJSON(data []byte, into any) error { return json.Unmarshal(data, into) }

// The shadowed template must be the one that decodes and encodes, and every
// upstream field must still round-trip.
func TestShadowedTemplateRoundTrips(t *testing.T) {
	in := `{"spec":{"replicas":3,"paused":true,"template":{"metadata":{"labels":{"a":"b"}},"spec":{"dnsPolicy":"Custom","dnsParams":{"custom":{"search":["$(NAMESPACE).svc.$(CLUSTER)","$(HOST)"],"options":["ndots:2"]}},"containers":[{"name":"c","image":"i"}]}}}}`
	var d dpappsv1.Deployment
	if err := json.Unmarshal([]byte(in), &d); err != nil {
		t.Fatal(err)
	}
	if *d.Spec.Replicas != 3 || !d.Spec.Paused {
		t.Errorf("upstream fields lost: %+v", d.Spec.DeploymentSpec)
	}
	if d.Spec.Template.Spec.DNSParams == nil || len(d.Spec.Template.Spec.DNSParams.Custom.Search) != 2 {
		t.Fatalf("dnsParams lost: %+v", d.Spec.Template.Spec)
	}
	if d.Spec.Template.Labels["a"] != "b" || d.Spec.Template.Spec.Containers[0].Name != "c" {
		t.Errorf("template fields lost: %+v", d.Spec.Template)
	}
	out, err := json.Marshal(&d)
	if err != nil {
		t.Fatal(err)
	}
	var again dpappsv1.Deployment
	if err := json.Unmarshal(out, &again); err != nil {
		t.Fatal(err)
	}
	if again.Spec.Template.Spec.DNSParams.Custom.Options[0] != "ndots:2" {
		t.Errorf("round trip lost dnsParams: %s", out)
	}
}

func TestCronJobTemplate(t *testing.T) {
	in := `{"spec":{"schedule":"* * * * *","jobTemplate":{"spec":{"template":{"spec":{"dnsPolicy":"ClusterFirstWithAutopath"}}}}}}`
	var c dpbatchv1.CronJob
	if err := json.Unmarshal([]byte(in), &c); err != nil {
		t.Fatal(err)
	}
	if c.Spec.Schedule != "* * * * *" || c.Spec.JobTemplate.Spec.Template.Spec.DNSPolicy != "ClusterFirstWithAutopath" {
		t.Errorf("decoded %+v", c.Spec)
	}
}
