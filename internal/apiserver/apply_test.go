package apiserver

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// applyRow12 is the apply body of upstream's KEP-2885 integration test
// (k/k test/integration/apiserver/field_validation_test.go): JSON text
// with spec.paused duplicated on line 10 and imagePullPolicy on line 27.
const applyRow12 = `{
  "apiVersion": "apps/v1",
  "kind": "Deployment",
  "metadata": {
    "name": "dupes",
    "labels": {"app": "nginx"}
  },
  "spec": {
    "paused": false,
    "paused": true,
    "selector": {
      "matchLabels": {
        "app": "nginx"
      }
    },
    "template": {
      "metadata": {
        "labels": {
          "app": "nginx"
        }
      },
      "spec": {
        "containers": [{
          "name": "nginx",
          "image": "nginx:latest",
          "imagePullPolicy": "Never",
          "imagePullPolicy": "Always"
        }]
      }
    }
  }
}`

// deploymentYAML is an apply body for Deployment "web".
func deploymentYAML(replicas string, extra string) string {
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
` + extra
}

type applyResponse struct {
	code     int
	message  string
	warnings []string
	obj      struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
			ManagedFields   []struct {
				Manager, Operation, APIVersion, FieldsType, Subresource string
				FieldsV1                                                json.RawMessage
			} `json:"managedFields"`
		} `json:"metadata"`
		Spec struct {
			Replicas *int32 `json:"replicas"`
		} `json:"spec"`
	}
}

// managers lists "manager/Operation" of every managedFields entry.
func (r applyResponse) managers() []string {
	var out []string
	for _, e := range r.obj.Metadata.ManagedFields {
		s := e.Manager + "/" + e.Operation
		if e.Subresource != "" {
			s += "/" + e.Subresource
		}
		out = append(out, s)
	}
	return out
}

func applyCaller(t *testing.T, ts *testServer) func(method, url, ctype, body string) applyResponse {
	t.Helper()
	hc, err := rest.HTTPClientFor(ts.config)
	if err != nil {
		t.Fatal(err)
	}
	return func(method, url, ctype, body string) applyResponse {
		t.Helper()
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		req.Header.Set("User-Agent", "ssa-test/1.0 (linux)")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		out := applyResponse{code: resp.StatusCode, warnings: resp.Header.Values("Warning")}
		var st struct{ Kind, Message string }
		_ = json.Unmarshal(data, &st)
		if st.Kind == "Status" {
			out.message = st.Message
		}
		_ = json.Unmarshal(data, &out.obj)
		return out
	}
}

func TestServerSideApply(t *testing.T) {
	ts := sharedServer(t)
	ns := newNamespace(t, ts.client)
	do := applyCaller(t, ts)
	base := ts.run.URL + "/apis/apps/v1/namespaces/" + ns + "/deployments"
	web := base + "/web"
	one := func(r applyResponse) int32 {
		if r.obj.Spec.Replicas == nil {
			return -1
		}
		return *r.obj.Spec.Replicas
	}
	steps := []struct {
		name, method, url, ctype, body string
		code                           int
		message                        string   // whole message, "" for none
		warnings                       []string // exact
		managers                       []string // exact and in order (Apply entries first), when not nil
		replicas                       int32    // checked when not 0
	}{
		{name: "fieldManager required", method: "PATCH", url: web, ctype: mediaApplyPatch, body: deploymentYAML("1", ""),
			code: 422, message: `PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch`},
		{name: "row 12 duplicates strict", method: "PATCH", url: base + "/dupes?fieldManager=mgr&fieldValidation=Strict", ctype: mediaApplyPatch, body: applyRow12,
			code: 400, message: `error strict decoding YAML: duplicate field "spec.paused" (line 10), duplicate field "spec.template.spec.containers[0].imagePullPolicy" (line 27)`},
		{name: "row 13 duplicates warn", method: "PATCH", url: base + "/dupes?fieldManager=mgr", ctype: mediaApplyPatch, body: applyRow12,
			code: 201, warnings: []string{`299 - "duplicate field \"spec.paused\" (line 10)"`, `299 - "duplicate field \"spec.template.spec.containers[0].imagePullPolicy\" (line 27)"`},
			managers: []string{"mgr/Apply"}},
		{name: "unknown field is a 400", method: "PATCH", url: web + "?fieldManager=mgr&fieldValidation=Ignore", ctype: mediaApplyPatch, body: deploymentYAML("1", "  foo: bar\n"),
			code: 400, message: `failed to create typed patch object (` + ns + `/web; apps/v1, Kind=Deployment): .spec.foo: field not declared in schema`},
		{name: "dry run creates nothing", method: "PATCH", url: web + "?fieldManager=mgr&dryRun=All", ctype: mediaApplyPatch, body: deploymentYAML("1", ""),
			code: 201, managers: []string{"mgr/Apply"}},
		{name: "dry run left no object", method: "GET", url: web, code: 404, message: `deployments.apps "web" not found`},
		{name: "apply creates", method: "PATCH", url: web + "?fieldManager=mgr", ctype: mediaApplyPatch, body: deploymentYAML("1", ""),
			code: 201, managers: []string{"mgr/Apply"}, replicas: 1},
		{name: "apply updates", method: "PATCH", url: web + "?fieldManager=mgr&force=false", ctype: mediaApplyPatch, body: deploymentYAML("2", ""),
			code: 200, managers: []string{"mgr/Apply"}, replicas: 2},
		{name: "another manager scales", method: "PATCH", url: web + "?fieldManager=scaler", ctype: mediaMergePatch, body: `{"spec":{"replicas":5}}`,
			code: 200, managers: []string{"mgr/Apply", "scaler/Update"}, replicas: 5},
		{name: "conflict", method: "PATCH", url: web + "?fieldManager=mgr", ctype: mediaApplyPatch, body: deploymentYAML("3", ""),
			code: 409, message: `Apply failed with 1 conflict: conflict with "scaler" using apps/v1: .spec.replicas`},
		{name: "force takes the field", method: "PATCH", url: web + "?fieldManager=mgr&force=true", ctype: mediaApplyPatch, body: deploymentYAML("3", ""),
			code: 200, managers: []string{"mgr/Apply"}, replicas: 3},
		{name: "update without fieldManager is named after the User-Agent", method: "PATCH", url: web, ctype: mediaMergePatch, body: `{"metadata":{"labels":{"x":"y"}}}`,
			code: 200, managers: []string{"mgr/Apply", "ssa-test/Update"}},
		{name: "status apply", method: "PATCH", url: web + "/status?fieldManager=statusmgr", ctype: mediaApplyPatch,
			body: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"status":{"observedGeneration":1}}`,
			code: 200, managers: []string{"mgr/Apply", "statusmgr/Apply/status", "ssa-test/Update"}},
		{name: "an empty managedFields item resets them", method: "PATCH", url: web, ctype: mediaMergePatch, body: `{"metadata":{"managedFields":[{}]}}`,
			code: 200, managers: []string{}},
		{name: "wrong kind", method: "PATCH", url: web + "?fieldManager=mgr", ctype: mediaApplyPatch, body: strings.Replace(deploymentYAML("1", ""), "kind: Deployment", "kind: ReplicaSet", 1),
			code: 400, message: `invalid object type: apps/v1, Kind=ReplicaSet`},
		{name: "the first apply after a reset gives the other fields to before-first-apply", method: "PATCH", url: web + "?fieldManager=mgr&force=true", ctype: mediaApplyPatch, body: deploymentYAML("3", ""),
			code: 200, managers: []string{"mgr/Apply", "before-first-apply/Update"}},
		{name: "an empty managedFields list resets them", method: "PATCH", url: web, ctype: mediaMergePatch, body: `{"metadata":{"managedFields":[]}}`,
			code: 200, managers: []string{}},
		{name: "managedFields in an apply body", method: "PATCH", url: web + "?fieldManager=mgr", ctype: mediaApplyPatch,
			body: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","managedFields":[{"manager":"x"}]}}`,
			code: 400, message: `metadata.managedFields must be nil`},
		{name: "wrong type", method: "PATCH", url: web + "?fieldManager=mgr", ctype: mediaApplyPatch, body: deploymentYAML(`"x"`, ""),
			code: 400, message: `failed to create typed patch object (` + ns + `/web; apps/v1, Kind=Deployment): .spec.replicas: expected numeric (int or float), got string`},
		{name: "stale resourceVersion", method: "PATCH", url: web + "?fieldManager=mgr", ctype: mediaApplyPatch,
			body: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","resourceVersion":"1"}}`,
			code: 409, message: `Operation cannot be fulfilled on deployments.apps "web": the object has been modified; please apply your changes to the latest version and try again`},
		{name: "status apply needs the object", method: "PATCH", url: base + "/nope/status?fieldManager=mgr", ctype: mediaApplyPatch,
			body: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"nope"},"status":{"observedGeneration":1}}`,
			code: 404, message: `deployments.apps "nope" not found`},
		{name: "create records an Update", method: "POST", url: ts.run.URL + "/api/v1/namespaces/" + ns + "/configmaps?fieldManager=kubectl-create", ctype: "application/json",
			body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"a":"b"}}`, code: 201, managers: []string{"kubectl-create/Update"}},
		{name: "configmap apply takes shared ownership", method: "PATCH", url: ts.run.URL + "/api/v1/namespaces/" + ns + "/configmaps/cm?fieldManager=mgr", ctype: mediaApplyPatch,
			body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"a":"b"}}`, code: 200, managers: []string{"mgr/Apply", "kubectl-create/Update"}},
		{name: "cluster-scoped apply", method: "PATCH", url: ts.run.URL + "/api/v1/namespaces/" + ns + "-x?fieldManager=mgr", ctype: mediaApplyPatch,
			body: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"` + ns + `-x","labels":{"a":"b"}}}`, code: 201, managers: []string{"mgr/Apply"}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			r := do(st.method, st.url, st.ctype, st.body)
			if r.code != st.code || r.message != st.message {
				t.Fatalf("got %d %q, want %d %q", r.code, r.message, st.code, st.message)
			}
			if strings.Join(r.warnings, "\n") != strings.Join(st.warnings, "\n") {
				t.Errorf("warnings %q, want %q", r.warnings, st.warnings)
			}
			if st.managers != nil && strings.Join(r.managers(), ",") != strings.Join(st.managers, ",") {
				t.Errorf("managers %q, want %q", r.managers(), st.managers)
			}
			for _, e := range r.obj.Metadata.ManagedFields {
				if e.FieldsType != "FieldsV1" || len(e.FieldsV1) == 0 || e.APIVersion == "" {
					t.Errorf("managedFields entry %+v", e)
				}
			}
			if st.replicas != 0 && one(r) != st.replicas {
				t.Errorf("replicas %d, want %d", one(r), st.replicas)
			}
		})
	}

	// Applying the same configuration again changes nothing.
	first := do("PATCH", web+"?fieldManager=mgr&force=true", mediaApplyPatch, deploymentYAML("3", ""))
	again := do("PATCH", web+"?fieldManager=mgr&force=true", mediaApplyPatch, deploymentYAML("3", ""))
	if first.code != 200 || again.code != 200 || first.obj.Metadata.ResourceVersion != again.obj.Metadata.ResourceVersion {
		t.Errorf("no-op apply: %d %s then %d %s", first.code, first.obj.Metadata.ResourceVersion, again.code, again.obj.Metadata.ResourceVersion)
	}
}
