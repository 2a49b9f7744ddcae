package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"
)

// TestKubectlControllerKinds drives the last kinds issue 19 added with the
// real kubectl: `kubectl certificate approve|deny` (the /approval
// subresource), HorizontalPodAutoscalers at v1 and v2 (`kubectl autoscale`
// writes v1, v2 reads it back converted and v1 again), and
// ValidatingAdmissionPolicies, whose broken expression is refused with
// cel-go's message.
func TestKubectlControllerKinds(t *testing.T) {
	requireKubectl(t)
	srv := sharedServer(t)
	kc := srv.Kubeconfig
	ns := newNamespace(t, kc)

	t.Run("certificate approve", func(t *testing.T) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "e2e"}}, key)
		if err != nil {
			t.Fatal(err)
		}
		request := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
		for _, name := range []string{ns + "-a", ns + "-d"} {
			manifest := fmt.Sprintf(`apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata:
  name: %s
spec:
  request: %s
  signerName: example.com/e2e
  usages: [digital signature, client auth]
`, name, request)
			wantKubectl(t, kc, manifest, ok("certificatesigningrequest.certificates.k8s.io/"+name+" created"), "create", "-f", "-")
		}
		wantKubectl(t, kc, "", ok("certificatesigningrequest.certificates.k8s.io/"+ns+"-a approved"), "certificate", "approve", ns+"-a")
		wantKubectl(t, kc, "", ok("certificatesigningrequest.certificates.k8s.io/"+ns+"-d denied"), "certificate", "deny", ns+"-d")
		for name, want := range map[string]string{ns + "-a": "Approved", ns + "-d": "Denied"} {
			out := mustKubectl(t, kc, "", "get", "csr", name, "--no-headers")
			if f := strings.Fields(out); len(f) < 6 || f[len(f)-1] != want {
				t.Errorf("kubectl get csr %s: %q, want CONDITION %s", name, out, want)
			}
		}
		// An approved request stays approved: kube refuses a deny.
		_, errOut, code := kubectl(t, kc, "", "certificate", "deny", ns+"-a")
		if code == 0 || !strings.Contains(errOut, "Approved") {
			t.Errorf("denying an approved request: exit %d, stderr %q", code, errOut)
		}
	})

	t.Run("hpa at v1 and v2", func(t *testing.T) {
		wantKubectl(t, kc, "", ok("deployment.apps/web created"), "-n", ns, "create", "deployment", "web", "--image=registry.k8s.io/pause:3.10")
		wantKubectl(t, kc, "", ok("horizontalpodautoscaler.autoscaling/web autoscaled"), "-n", ns, "autoscale", "deployment", "web", "--max=4", "--cpu-percent=60")
		// kubectl 1.32 creates it at v1; the short name resolves to the
		// preferred v2 (and drops a version given with it), the plural
		// reads v1.
		wantKubectl(t, kc, "", run{stdout: "60 4"}, "-n", ns, "get", "horizontalpodautoscalers.v1.autoscaling", "web", "-o", "jsonpath={.spec.targetCPUUtilizationPercentage} {.spec.maxReplicas}")
		wantKubectl(t, kc, "", run{stdout: "autoscaling/v2 60"}, "-n", ns, "get", "hpa", "web", "-o", "jsonpath={.apiVersion} {.spec.metrics[0].resource.target.averageUtilization}")
	})

	t.Run("validating admission policy", func(t *testing.T) {
		policy := func(name, expression string) string {
			return fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: %s
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [deployments]
  validations:
  - expression: %q
`, name, expression)
		}
		wantKubectl(t, kc, policy(ns, "object.spec.replicas <= 5"), ok("validatingadmissionpolicy.admissionregistration.k8s.io/"+ns+" created"), "create", "-f", "-")
		_, errOut, code := kubectl(t, kc, policy(ns+"-broken", "object.spec.replicas <"), "create", "-f", "-")
		if code != 1 || !strings.Contains(errOut, "spec.validations[0].expression: Invalid value") || !strings.Contains(errOut, "Syntax error") {
			t.Errorf("a policy whose expression does not compile: exit %d, stderr %q", code, errOut)
		}
	})
}
