package apiserver

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// invJSON is the invalid Deployment of upstream's KEP-2885 integration test
// (k/k test/integration/apiserver/field_validation_test.go): duplicate
// metadata.name, unknown metadata.unknownMeta, spec.unknown1, spec.unknownDupe
// twice, spec.paused twice, and in containers[0] unknownNested and
// imagePullPolicy twice.
func invJSON(name string) string {
	return `{"apiVersion":"apps/v1","kind":"Deployment",
"metadata":{"name":"` + name + `","name":"` + name + `","unknownMeta":"x"},
"spec":{"unknown1":"val1","unknownDupe":"a","unknownDupe":"b","paused":false,"paused":true,
"selector":{"matchLabels":{"app":"nginx"}},
"template":{"metadata":{"labels":{"app":"nginx"}},"spec":{"containers":[{"name":"nginx","image":"nginx:latest","unknownNested":"x","imagePullPolicy":"Always","imagePullPolicy":"Never"}]}}}}`
}

const invJSONErrors = `duplicate field "metadata.name", unknown field "metadata.unknownMeta", unknown field "spec.unknown1", unknown field "spec.unknownDupe", duplicate field "spec.paused", unknown field "spec.template.spec.containers[0].unknownNested", duplicate field "spec.template.spec.containers[0].imagePullPolicy"`

func TestFieldValidationCreateUpdate(t *testing.T) {
	ts := sharedServer(t)
	ns := newNamespace(t, ts.client)
	call := rawCaller(t, ts)
	base := ts.run.URL + "/apis/apps/v1/namespaces/" + ns + "/deployments"
	do := func(method, url, body string) (int, string, []string) {
		return call(method, url, "application/json", body)
	}
	var wantWarnings []string
	for _, p := range strings.Split(invJSONErrors, ", ") {
		wantWarnings = append(wantWarnings, `299 - "`+strings.ReplaceAll(p, `"`, `\"`)+`"`)
	}
	tests := []struct {
		name, method, name2, query string
		code                       int
		msg                        string
		warnings                   []string
	}{
		{"row 1 strict", "POST", "d1", "?fieldValidation=Strict", 400,
			`Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: ` + invJSONErrors, nil},
		{"row 2 warn", "POST", "d2", "?fieldValidation=Warn", 201, "", wantWarnings},
		{"row 3 default is warn", "POST", "d3", "", 201, "", wantWarnings},
		{"row 4 ignore", "POST", "d4", "?fieldValidation=Ignore", 201, "", nil},
		{"row 7 update strict", "PUT", "d4", "?fieldValidation=Strict", 400,
			`Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: ` + invJSONErrors, nil},
		{"first value wins", "POST", "d5", "?fieldValidation=Strict&fieldValidation=Ignore", 400, "strict decoding error", nil},
		{"bad value", "POST", "d6", "?fieldValidation=strict", 422,
			`CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "strict": supported values: "", "Ignore", "Strict", "Warn"`, nil},
		{"bad value on update", "PUT", "d4", "?fieldValidation=foo", 422,
			`UpdateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "foo": supported values: "", "Ignore", "Strict", "Warn"`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := base + tt.query
			if tt.method == "PUT" {
				url = base + "/" + tt.name2 + tt.query
			}
			code, msg, warnings := do(tt.method, url, invJSON(tt.name2))
			if code != tt.code || !strings.Contains(msg, tt.msg) {
				t.Errorf("got %d %q, want %d %q", code, msg, tt.code, tt.msg)
			}
			if strings.Join(warnings, "\n") != strings.Join(tt.warnings, "\n") {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warnings, "\n"), strings.Join(tt.warnings, "\n"))
			}
		})
	}
}

func TestWarningRecorder(t *testing.T) {
	long := strings.Repeat("x", 1000)
	tests := []struct {
		name string
		add  []string
		want []string
	}{
		{"dedup and empty", []string{"a", "", "a", "b"}, []string{"a", "b"}},
		{"escaping", []string{`unknown field "a\b"`}, []string{`unknown field "a\b"`}},
		{"truncated past 4096 runes", []string{long + "1", long + "2", long + "3", long + "4", long + "5"},
			[]string{long[:256], long[:256], long[:256], long[:256], long[:256]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec warningRecorder
			for _, a := range tt.add {
				rec.add(a)
			}
			if strings.Join(rec.texts, "|") != strings.Join(tt.want, "|") {
				t.Errorf("got %d texts %q", len(rec.texts), rec.texts)
			}
		})
	}
	h := http.Header{}
	rec := warningRecorder{}
	rec.add(`say "hi" \ bye`)
	rec.write(h)
	if got := h.Get("Warning"); got != `299 - "say \"hi\" \\ bye"` {
		t.Errorf("header %q", got)
	}
}

func TestFieldValidationPatches(t *testing.T) {
	ts := sharedServer(t)
	ns := newNamespace(t, ts.client)
	do := rawCaller(t, ts)
	base := ts.run.URL + "/apis/apps/v1/namespaces/" + ns + "/deployments"
	if code, msg, _ := do("POST", base+"?fieldValidation=Ignore", "application/json", invJSON("p")); code != 201 {
		t.Fatalf("create: %d %s", code, msg)
	}
	mergeBody := `{"spec":{"unknown1":"val1","unknownDupe":"a","unknownDupe":"b","paused":false,"paused":true,"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:latest","unknownNested":"x","imagePullPolicy":"Always","imagePullPolicy":"Never"}]}}}}`
	row8 := `strict decoding error: duplicate field "spec.unknownDupe", duplicate field "spec.paused", duplicate field "spec.template.spec.containers[0].imagePullPolicy", unknown field "spec.template.spec.containers[0].unknownNested", unknown field "spec.unknown1", unknown field "spec.unknownDupe"`
	jsonPatch := `[{"op":"add","path":"/spec/unknown1","value":"val1","foo":"bar"},{"op":"add","path":"/spec/unknown2","path":"/spec/unknown3","value":"val2"},{"op":"add","path":"/spec/unknownDupe","value":"valDupe"},{"op":"add","path":"/spec/template/spec/containers/0/unknownNested","value":"val"}]`
	row9 := `strict decoding error: json patch unknown field "[0].foo", json patch duplicate field "[1].path", unknown field "spec.template.spec.containers[0].unknownNested", unknown field "spec.unknown1", unknown field "spec.unknown3", unknown field "spec.unknownDupe"`
	tests := []struct {
		name, ctype, body, query string
		code                     int
		suffix                   string
		warnings                 int
	}{
		{"row 8 merge strict", mediaMergePatch, mergeBody, "?fieldValidation=Strict", 422, row8, 0},
		{"row 8 merge warn", mediaMergePatch, mergeBody, "?fieldValidation=Warn", 200, "", 6},
		{"row 9 json patch strict", mediaJSONPatch, jsonPatch, "?fieldValidation=Strict", 422, row9, 0},
		{"row 9 json patch default warn", mediaJSONPatch, jsonPatch, "", 200, "", 6},
		{"row 10 strategic strict", mediaStrategicPatch, mergeBody, "?fieldValidation=Strict", 422, row8, 0},
		{"row 11 strategic duplicates only", mediaStrategicPatch,
			`{"spec":{"paused":false,"paused":true,"template":{"spec":{"containers":[{"name":"nginx","imagePullPolicy":"Always","imagePullPolicy":"Never"}]}}}}`,
			"?fieldValidation=Strict", 422, `strict decoding error: duplicate field "spec.paused", duplicate field "spec.template.spec.containers[0].imagePullPolicy"`, 0},
		{"ignore", mediaMergePatch, mergeBody, "?fieldValidation=Ignore", 200, "", 0},
		{"force on a non-apply patch", mediaMergePatch, `{}`, "?force=true", 422,
			`PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, msg, warnings := do("PATCH", base+"/p"+tt.query, tt.ctype, tt.body)
			if code != tt.code || !strings.HasSuffix(msg, tt.suffix) || len(warnings) != tt.warnings {
				t.Errorf("got %d %q with %d warnings %q, want %d …%q with %d", code, msg, len(warnings), warnings, tt.code, tt.suffix, tt.warnings)
			}
			if tt.code == 422 && strings.HasPrefix(tt.suffix, "strict") && !strings.HasPrefix(msg, ` "" is invalid: patch: Invalid value: "`) {
				t.Errorf("message shape: %q", msg)
			}
		})
	}
}

// rawCaller returns a function that sends one authenticated request and
// returns the status code, the Status message and the Warning headers.
func rawCaller(t *testing.T, ts *testServer) func(method, url, ctype, body string) (int, string, []string) {
	t.Helper()
	hc, err := rest.HTTPClientFor(ts.config)
	if err != nil {
		t.Fatal(err)
	}
	return func(method, url, ctype, body string) (int, string, []string) {
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		var st struct{ Message string }
		_ = json.Unmarshal(data, &st)
		return resp.StatusCode, st.Message, resp.Header.Values("Warning")
	}
}

// invYAML is invJSON as YAML, laid out so the duplicates are on the lines
// where upstream's YAML body has them (5, 12, 14 and 28).
func invYAML(name string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ` + name + `
  name: ` + name + `
  unknownMeta: x
spec:
  selector:
    matchLabels:
      app: nginx
  unknownDupe: a
  unknownDupe: b
  paused: false
  paused: true
  unknown1: val1
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx:latest
        unknownNested: x
        ports:
        - containerPort: 80
        imagePullPolicy: Always
        imagePullPolicy: Never
`
}

// YAML bodies get upstream's path-based texts plus the line of each key.
func TestFieldValidationYAMLLines(t *testing.T) {
	ts := sharedServer(t)
	ns := newNamespace(t, ts.client)
	do := rawCaller(t, ts)
	base := ts.run.URL + "/apis/apps/v1/namespaces/" + ns + "/deployments"
	want := []string{
		`duplicate field "metadata.name" (line 5)`,
		`unknown field "metadata.unknownMeta" (line 6)`,
		`unknown field "spec.unknownDupe" (line 11)`,
		`duplicate field "spec.paused" (line 14)`,
		`unknown field "spec.unknown1" (line 15)`,
		`unknown field "spec.template.spec.containers[0].unknownNested" (line 24)`,
		`duplicate field "spec.template.spec.containers[0].imagePullPolicy" (line 28)`,
	}
	code, msg, _ := do("POST", base+"?fieldValidation=Strict", "application/yaml", invYAML("y1"))
	wantMsg := `Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: ` + strings.Join(want, ", ")
	if code != 400 || msg != wantMsg {
		t.Errorf("strict: %d %q\nwant 400 %q", code, msg, wantMsg)
	}
	code, _, warnings := do("POST", base, "application/yaml", invYAML("y2"))
	var got []string
	for _, w := range warnings {
		got = append(got, strings.ReplaceAll(strings.TrimSuffix(strings.TrimPrefix(w, `299 - "`), `"`), `\"`, `"`))
	}
	if code != 201 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warn: %d\n%s\nwant\n%s", code, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestFieldManagerValidation(t *testing.T) {
	ts := sharedServer(t)
	ns := newNamespace(t, ts.client)
	do := rawCaller(t, ts)
	url := ts.run.URL + "/api/v1/namespaces/" + ns + "/configmaps?fieldManager="
	long := strings.Repeat("m", 129)
	code, msg, _ := do("POST", url+long, "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`)
	if code != 422 || !strings.HasPrefix(msg, `CreateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: `) {
		t.Errorf("long manager: %d %q", code, msg)
	}
	code, msg, _ = do("POST", url+"ok-manager", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}`)
	if code != 201 {
		t.Errorf("valid manager: %d %q", code, msg)
	}
}
