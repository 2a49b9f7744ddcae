package apiserver

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	// Registers metav1.Status as kube-apiserver's scheme has it.
	_ "k8s.io/kubernetes/pkg/apis/core/install"
)

// upstreamErrorBody is the body kube-apiserver sends for err on a request
// to a resource of gv: its handlers hand every error to
// responsewriters.ErrorNegotiated with the resource's group version
// (k8s.io/apiserver/pkg/endpoints/handlers/rest.go), which takes the
// StatusError's Status and encodes it with the JSON serializer of
// legacyscheme.Codecs for gv (responsewriters/writers.go, SerializeObject).
// responsewriters itself is not called because it drags CEL into the test
// binary's dependencies; the encoder it calls is.
func upstreamErrorBody(t *testing.T, err *apierrors.StatusError, gv schema.GroupVersion) (int, []byte) {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(legacyscheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	if !ok {
		t.Fatal("legacyscheme.Codecs has no JSON serializer")
	}
	status := err.Status()
	var buf bytes.Buffer
	if err := legacyscheme.Codecs.EncoderForVersion(info.Serializer, gv).Encode(&status, &buf); err != nil {
		t.Fatal(err)
	}
	return int(status.Code), buf.Bytes()
}

// TestErrorBodiesAreKubeAPIServers compares whole error bodies, byte for
// byte, with what kube-apiserver sends for the same request. The expected
// errors are built with apierrors and the messages upstream's handlers and
// validators use, never from dnsplane's output.
func TestErrorBodiesAreKubeAPIServers(t *testing.T) {
	ts := sharedServer(t)
	ns := newNamespace(t, ts.client)
	hc, err := rest.HTTPClientFor(ts.config)
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path, body string) (int, []byte) {
		t.Helper()
		req, err := http.NewRequestWithContext(context.Background(), method, ts.run.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, b
	}
	appsV1 := schema.GroupVersion{Group: "apps", Version: "v1"}
	coreV1 := schema.GroupVersion{Version: "v1"}
	deployments := "/apis/apps/v1/namespaces/" + ns + "/deployments"
	configMaps := "/api/v1/namespaces/" + ns + "/configmaps"
	const cm = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}`
	// A Deployment valid but for its negative replicas.
	const negativeReplicas = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":-1,` +
		`"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},` +
		`"spec":{"containers":[{"name":"c","image":"nginx:1.27"}]}}}}`
	if code, body := do(http.MethodPost, configMaps, cm); code != http.StatusCreated {
		t.Fatalf("creating the ConfigMap: %d %s", code, body)
	}
	tests := []struct {
		name, method, path, body string
		gv                       schema.GroupVersion
		want                     *apierrors.StatusError
	}{
		{
			// ValidateDeploymentSpec: apivalidation.ValidateNonnegativeField
			// (k8s.io/kubernetes/pkg/apis/apps/validation/validation.go).
			name: "422 invalid Deployment", method: http.MethodPost, path: deployments, body: negativeReplicas, gv: appsV1,
			want: apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web", field.ErrorList{
				field.Invalid(field.NewPath("spec", "replicas"), int64(-1), apimachineryvalidation.IsNegativeErrorMsg),
			}),
		},
		{
			name: "404 not found", method: http.MethodGet, path: deployments + "/absent", gv: appsV1,
			want: apierrors.NewNotFound(schema.GroupResource{Group: "apps", Resource: "deployments"}, "absent"),
		},
		{
			name: "409 already exists", method: http.MethodPost, path: configMaps, body: cm, gv: coreV1,
			want: apierrors.NewAlreadyExists(schema.GroupResource{Resource: "configmaps"}, "x"),
		},
		{
			// k8s.io/apiserver/pkg/endpoints/handlers/rest.go, checkName.
			name: "400 name mismatch", method: http.MethodPut, path: configMaps + "/a", body: cm, gv: coreV1,
			want: apierrors.NewBadRequest("the name of the object (x) does not match the name on the URL (a)"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantCode, want := upstreamErrorBody(t, tt.want, tt.gv)
			code, got := do(tt.method, tt.path, tt.body)
			if code != wantCode || !bytes.Equal(got, want) {
				t.Errorf("got %d\n%q\nwant %d (kube-apiserver)\n%q", code, got, wantCode, want)
			}
		})
	}
}

// TestVersionIsWrittenRaw: kube-apiserver writes /version with
// responsewriters.WriteRawJSON (k8s.io/apiserver/pkg/server/routes/version.go),
// which is json.MarshalIndent with two spaces and no trailing newline.
func TestVersionIsWrittenRaw(t *testing.T) {
	rec := httptest.NewRecorder()
	writeRawJSON(rec, http.StatusOK, versionInfo())
	body := rec.Body.String()
	if !strings.HasPrefix(body, "{\n  \"major\": \"1\",\n  \"minor\": ") || strings.HasSuffix(body, "\n") {
		t.Errorf("got %q, want version.Info indented by two spaces, no trailing newline", body)
	}
}
