package apiserver

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// invJSON is the reference's INV-JSON Deployment (section 1.7): duplicate
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
	hc, err := rest.HTTPClientFor(ts.config)
	if err != nil {
		t.Fatal(err)
	}
	base := ts.run.URL + "/apis/apps/v1/namespaces/" + ns + "/deployments"
	do := func(method, url, body string) (int, string, []string) {
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
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
