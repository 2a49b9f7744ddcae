package apiserver

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkFieldValidationHandler runs create, update and each patch type of
// a realistic Deployment (JSON and YAML) through the full handler with
// embedded etcd, under each fieldValidation directive, so the directives'
// cost is compared in one run the way the KEP measured it (valid bodies:
// what production traffic carries).
func BenchmarkFieldValidationHandler(b *testing.B) {
	hb := newHandlerBench(b)
	base := "/apis/apps/v1/namespaces/" + benchNamespace + "/deployments"
	deployJSON := func(name string, replicas int) string {
		return `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"` + name + `","labels":{"app":"web"}},` +
			`"spec":{"replicas":` + strconv.Itoa(replicas) + `,"selector":{"matchLabels":{"app":"web"}},` +
			`"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx:1.27",` +
			`"ports":[{"containerPort":80}],"env":[{"name":"A","value":"1"}],"resources":{"requests":{"cpu":"100m"}}}],` +
			`"dnsPolicy":"ClusterFirst"}}}}`
	}
	deployYAML := func(name string, replicas int) string {
		return "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: " + name + "\n  labels:\n    app: web\nspec:\n  replicas: " +
			strconv.Itoa(replicas) + "\n  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n      labels:\n        app: web\n" +
			"    spec:\n      containers:\n      - name: web\n        image: nginx:1.27\n        ports:\n        - containerPort: 80\n" +
			"        env:\n        - name: A\n          value: \"1\"\n        resources:\n          requests:\n            cpu: 100m\n      dnsPolicy: ClusterFirst\n"
	}
	send := func(b *testing.B, method, path, ctype, body string, want int) {
		b.Helper()
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		req.Header.Set("Accept", "application/json")
		req.Header.Set("Authorization", hb.auth)
		rec := httptest.NewRecorder()
		hb.handler.ServeHTTP(rec, req)
		if rec.Code != want {
			b.Fatalf("%s %s: %d, want %d: %s", method, path, rec.Code, want, rec.Body.String())
		}
	}
	n := 0
	fresh := func() string { n++; return "fv-" + strconv.Itoa(n) }
	for _, fv := range []string{"Ignore", "Warn", "Strict"} {
		q := "?fieldValidation=" + fv
		b.Run("create-json/"+fv, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				send(b, "POST", base+q, "application/json", deployJSON(fresh(), 1), 201)
			}
		})
		b.Run("create-yaml/"+fv, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				send(b, "POST", base+q, "application/yaml", deployYAML(fresh(), 1), 201)
			}
		})
		name := fresh()
		send(b, "POST", base, "application/json", deployJSON(name, 1), 201)
		item := base + "/" + name + q
		r := 1
		b.Run("update-json/"+fv, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r++
				send(b, "PUT", item, "application/json", deployJSON(name, r), 200)
			}
		})
		patches := []struct{ kind, ctype string }{
			{"merge", mediaMergePatch}, {"json", mediaJSONPatch}, {"strategic", mediaStrategicPatch},
		}
		for _, p := range patches {
			b.Run("patch-"+p.kind+"/"+fv, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					r++
					body := `{"spec":{"replicas":` + strconv.Itoa(r) + `}}`
					if p.ctype == mediaJSONPatch {
						body = `[{"op":"replace","path":"/spec/replicas","value":` + strconv.Itoa(r) + `}]`
					}
					send(b, "PATCH", item, p.ctype, body, http.StatusOK)
				}
			})
		}
	}
}
