package apiserver

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkDeploymentCreate creates a new Deployment per iteration (POST,
// 201) in a namespace without pod-security labels: what Pod Security
// admission on workload templates costs a write that it lets through
// silently (a namespace read and the label parse; docs/apiserver.md, "Pod
// Security admission").
func BenchmarkDeploymentCreate(b *testing.B) {
	hb := newHandlerBench(b)
	const body = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"NAME"},"spec":{` +
		`"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},` +
		`"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`
	before, after, _ := strings.Cut(body, "NAME")
	path := "/apis/apps/v1/namespaces/" + benchNamespace + "/deployments"
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		hb.do(b, http.MethodPost, path, []byte(before+"d-"+strconv.Itoa(i)+after), http.StatusCreated)
		i++
	}
}
