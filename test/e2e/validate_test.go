package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// TestKubectlValidate runs kubectl's --validate modes against a manifest with
// an unknown field, for create, apply and replace, and checks exit status and
// the exact lines kubectl prints (what it prints against kube-apiserver).
func TestKubectlValidate(t *testing.T) {
	requireKubectl(t)
	kc := sharedServer(t).Kubeconfig
	manifest := func(name, value string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  a: %q\nbogus: 1\n", name, value)
	}
	strictErr := func(verb, file string) string {
		return `Error from server (BadRequest): error when ` + verb + ` "` + file + `": ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "bogus"`
	}
	const warning = `Warning: unknown field "bogus"` + "\n"
	for _, mode := range []string{"strict", "true", "warn", "ignore", "false"} {
		t.Run(mode, func(t *testing.T) {
			ns := newNamespace(t, kc)
			name := "cm-" + mode
			path := writeFile(t, name+".yaml", manifest(name, "1"))
			flag := "--validate=" + mode
			switch mode {
			case "strict", "true":
				wantKubectl(t, kc, "", failed(strictErr("creating", path)), "-n", ns, "create", "-f", path, flag)
				wantKubectl(t, kc, "", failed(strictErr("creating", path)), "-n", ns, "apply", "-f", path, flag)
				wantKubectl(t, kc, "", failed(`Error from server (NotFound): configmaps "`+name+`" not found`), "-n", ns, "get", "configmap", name)
				// replace of an existing object fails the same way.
				mustKubectl(t, kc, "", "-n", ns, "create", "-f", path, "--validate=false")
				rewriteFile(t, path, manifest(name, "2"))
				wantKubectl(t, kc, "", failed(strictErr("replacing", path)), "-n", ns, "replace", "-f", path, flag)
				// Server-side dry run validates too and writes nothing.
				wantKubectl(t, kc, "", failed(strictErr("creating", path)), "-n", ns, "create", "-f", path, flag, "--dry-run=server")
			case "warn":
				wantKubectl(t, kc, "", run{stdout: "configmap/" + name + " created\n", stderr: warning}, "-n", ns, "create", "-f", path, flag)
				rewriteFile(t, path, manifest(name, "2"))
				wantKubectl(t, kc, "", run{stdout: "configmap/" + name + " replaced\n", stderr: warning}, "-n", ns, "replace", "-f", path, flag)
				rewriteFile(t, path, manifest(name, "3"))
				// The object was made by create, so kubectl also warns about the
				// missing last-applied annotation; the patch it sends carries
				// the unknown field and the server warns about it.
				missing := "Warning: resource configmaps/" + name + " is missing the kubectl.kubernetes.io/last-applied-configuration annotation which is required by kubectl apply. kubectl apply should only be used on resources created declaratively by either kubectl create --save-config or kubectl apply. The missing annotation will be patched automatically.\n"
				wantKubectl(t, kc, "", run{stdout: "configmap/" + name + " configured\n", stderr: missing + warning}, "-n", ns, "apply", "-f", path, flag)
			default:
				wantKubectl(t, kc, "", ok("configmap/"+name+" created"), "-n", ns, "create", "-f", path, flag)
				rewriteFile(t, path, manifest(name, "2"))
				wantKubectl(t, kc, "", ok("configmap/"+name+" replaced"), "-n", ns, "replace", "-f", path, flag)
			}
		})
	}
}

// TestKubectlValidateGateOff turns ServerSideFieldValidation off: the server
// no longer advertises fieldValidation, so kubectl falls back to client-side
// validation against the server's /openapi/v2 (protobuf) and reports the
// unknown field itself, as it does against a kube-apiserver without the
// feature.
func TestKubectlValidateGateOff(t *testing.T) {
	requireKubectl(t)
	srv := startServer(t, t.TempDir(), "--feature-gates=ServerSideFieldValidation=false")
	kc := srv.Kubeconfig
	path := writeFile(t, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: default\nbogus: 1\n")
	wantKubectl(t, kc, "", failed(`error: error validating "`+path+`": error validating data: ValidationError(ConfigMap): unknown field "bogus" in io.k8s.api.core.v1.ConfigMap; if you choose to ignore these errors, turn validation off with --validate=false`),
		"create", "-f", path)
	// Warn cannot be done client-side: kubectl says so and creates.
	out, errOut, code := kubectl(t, kc, "", "create", "-f", path, "--validate=warn")
	if code != 0 || out != "configmap/c created\n" || !strings.Contains(errOut, "cannot perform warn validation if server-side field validation is unsupported, skipping validation") {
		t.Errorf("warn: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestKubectlApplyUsesOpenAPISchemas checks that kubectl apply computes its
// strategic merge patches from the served OpenAPI v3 schemas without
// warnings, and that kubectl explain reads our fields.
func TestKubectlApplyUsesOpenAPISchemas(t *testing.T) {
	requireKubectl(t)
	kc := sharedServer(t).Kubeconfig
	ns := newNamespace(t, kc)
	deploy := func(replicas int) string {
		return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: %d
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "nginx:1.27"}, {name: side, image: busybox}]
`, replicas)
	}
	path := writeFile(t, "deploy.yaml", deploy(2))
	wantKubectl(t, kc, "", ok("deployment.apps/web created"), "-n", ns, "apply", "-f", path)
	rewriteFile(t, path, deploy(3))
	wantKubectl(t, kc, "", ok("deployment.apps/web configured"), "-n", ns, "apply", "-f", path)
	wantKubectl(t, kc, "", ok("deployment.apps/web unchanged"), "-n", ns, "apply", "-f", path)
	out := mustKubectl(t, kc, "", "explain", "deployment.spec.template.spec.dnsParams")
	if !strings.Contains(out, "FIELD: dnsParams <PodDNSParams>") {
		t.Errorf("explain:\n%s", out)
	}
}
