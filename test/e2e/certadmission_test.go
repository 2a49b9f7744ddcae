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
	"testing"
	"time"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TestCertificateAdmission: kube-apiserver's certificate admission with the
// real kubectl (docs/apiserver.md#certificate-admission). A user allowed to
// update certificatesigningrequests/approval still needs `approve` on the
// request's signer, and no one, the admin included, may ask the
// kube-apiserver-client signer for system:masters. Before, carol could
// approve any request and the admin could ask for system:masters.
func TestCertificateAdmission(t *testing.T) {
	requireKubectl(t)
	tokens := writeFile(t, "tokens.csv", "carol-token,carol,carol-uid\n")
	srv := startServer(t, t.TempDir(), "--token-auth-file", tokens)
	admin := srv.Kubeconfig
	carol := kubeconfigWithUser(t, admin, &clientcmdapi.AuthInfo{Token: "carol-token"})
	const signer = "kubernetes.io/kube-apiserver-client"
	csr := func(name string, orgs ...string) string {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: name, Organization: orgs}}, key)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf(`apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata:
  name: %s
spec:
  request: %s
  signerName: %s
  usages: [digital signature, client auth]
`, name, base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})), signer)
	}

	wantKubectl(t, admin, csr("masters", "system:masters"),
		failed(`Error from server (Forbidden): error when creating "STDIN": certificatesigningrequests.certificates.k8s.io "masters" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed`),
		"create", "-f", "-")
	wantKubectl(t, admin, csr("carol"), ok("certificatesigningrequest.certificates.k8s.io/carol created"), "create", "-f", "-")

	mustKubectl(t, admin, `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: csr-approver}
rules:
- {apiGroups: [certificates.k8s.io], resources: [certificatesigningrequests], verbs: [get, list]}
- {apiGroups: [certificates.k8s.io], resources: [certificatesigningrequests/approval], verbs: [update]}
`, "apply", "-f", "-")
	mustKubectl(t, admin, "", "create", "clusterrolebinding", "carol-approves", "--clusterrole=csr-approver", "--user=carol")
	eventually(t, 10*time.Second, 50*time.Millisecond, func() (bool, string) {
		out, stderr, _ := kubectl(t, carol, "", "auth", "can-i", "update", "certificatesigningrequests", "--subresource=approval")
		return out == "yes\n", stderr
	})
	wantKubectl(t, carol, "", failed(`Error from server (Forbidden): certificatesigningrequests.certificates.k8s.io "carol" is forbidden: user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client"`),
		"certificate", "approve", "carol")

	mustKubectl(t, admin, `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: csr-approver}
rules:
- {apiGroups: [certificates.k8s.io], resources: [certificatesigningrequests], verbs: [get, list]}
- {apiGroups: [certificates.k8s.io], resources: [certificatesigningrequests/approval], verbs: [update]}
- {apiGroups: [certificates.k8s.io], resources: [signers], resourceNames: [kubernetes.io/kube-apiserver-client], verbs: [approve]}
`, "apply", "-f", "-")
	// kubectl auth can-i cannot name signers (not a served resource): the
	// approval itself is the probe, allowed once the authorizer's informer
	// has seen the new rule.
	eventually(t, 10*time.Second, 50*time.Millisecond, func() (bool, string) {
		out, stderr, _ := kubectl(t, carol, "", "certificate", "approve", "carol")
		return out == "certificatesigningrequest.certificates.k8s.io/carol approved\n", stderr
	})
	wantKubectl(t, admin, "", ok("Approved"), "get", "csr", "carol", "-o", `jsonpath={.status.conditions[?(@.type=="Approved")].type}{"\n"}`)
}
