package e2e

import (
	"strings"
	"testing"
)

func webDeployment(replicas string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: ` + replicas + `
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: c
        image: nginx:1.27
`
}

// TestKubectlServerSideApply drives kubectl apply --server-side: create,
// update, a conflict with another manager and --force-conflicts, the
// managedFields both managers leave, a server dry run, and an unknown field.
func TestKubectlServerSideApply(t *testing.T) {
	requireKubectl(t)
	kc := sharedServer(t).Kubeconfig
	ns := newNamespace(t, kc)
	path := writeFile(t, "web.yaml", webDeployment("1"))
	managers := func() string {
		return jsonpath(t, kc, ns, "deployment", "web", "{.metadata.managedFields[*].manager}")
	}

	// A server dry run answers as if it applied and stores nothing.
	wantKubectl(t, kc, "", ok("deployment.apps/web serverside-applied (server dry run)"), "-n", ns, "apply", "--server-side", "--dry-run=server", "-f", path)
	wantKubectl(t, kc, "", failed(`Error from server (NotFound): deployments.apps "web" not found`), "-n", ns, "get", "deployment", "web")

	wantKubectl(t, kc, "", ok("deployment.apps/web serverside-applied"), "-n", ns, "apply", "--server-side", "-f", path)
	if got := managers(); got != "kubectl" {
		t.Errorf("managers after create: %q", got)
	}
	rewriteFile(t, path, webDeployment("2"))
	wantKubectl(t, kc, "", ok("deployment.apps/web serverside-applied"), "-n", ns, "apply", "--server-side", "-f", path)
	if got := jsonpath(t, kc, ns, "deployment", "web", "{.spec.replicas}"); got != "2" {
		t.Errorf("replicas after update: %q", got)
	}

	// Another manager takes spec.replicas.
	wantKubectl(t, kc, "", ok("deployment.apps/web patched"), "-n", ns, "patch", "deployment", "web", "--type=merge", "-p", `{"spec":{"replicas":5}}`)
	if got := managers(); got != "kubectl kubectl-patch" {
		t.Errorf("managers after patch: %q", got)
	}
	ops := jsonpath(t, kc, ns, "deployment", "web", "{.metadata.managedFields[*].operation}")
	types := jsonpath(t, kc, ns, "deployment", "web", "{.metadata.managedFields[*].fieldsType}")
	if ops != "Apply Update" || types != "FieldsV1 FieldsV1" {
		t.Errorf("managedFields operations %q, fieldsTypes %q", ops, types)
	}

	rewriteFile(t, path, webDeployment("3"))
	out, errOut, code := kubectl(t, kc, "", "-n", ns, "apply", "--server-side", "-f", path)
	want := `error: Apply failed with 1 conflict: conflict with "kubectl-patch" using apps/v1: .spec.replicas`
	if code != 1 || out != "" || !strings.HasPrefix(errOut, want) || !strings.Contains(errOut, "--force-conflicts") {
		t.Errorf("conflict: exit %d\nstdout: %q\nstderr: %q\nwant stderr starting %q", code, out, errOut, want)
	}
	if got := jsonpath(t, kc, ns, "deployment", "web", "{.spec.replicas}"); got != "5" {
		t.Errorf("replicas after the conflict: %q", got)
	}
	wantKubectl(t, kc, "", ok("deployment.apps/web serverside-applied"), "-n", ns, "apply", "--server-side", "--force-conflicts", "-f", path)
	if got := jsonpath(t, kc, ns, "deployment", "web", "{.spec.replicas}"); got != "3" {
		t.Errorf("replicas after --force-conflicts: %q", got)
	}
	if got := managers(); got != "kubectl" {
		t.Errorf("managers after --force-conflicts: %q", got)
	}

	// An unknown field is the client's error: 400 with the field named.
	bad := writeFile(t, "bad.yaml", webDeployment("3")+"  foo: bar\n")
	out, errOut, code = kubectl(t, kc, "", "-n", ns, "apply", "--server-side", "-f", bad)
	want = `Error from server (BadRequest): failed to create typed patch object (` + ns + `/web; apps/v1, Kind=Deployment): .spec.foo: field not declared in schema`
	if code != 1 || out != "" || !strings.Contains(errOut, want) {
		t.Errorf("unknown field: exit %d\nstdout: %q\nstderr: %q\nwant %q", code, out, errOut, want)
	}
}
