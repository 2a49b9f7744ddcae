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
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/dnsplane/dnsplane/internal/nodeplan"
)

// TestNodeIdentities: each agent of `up --nodes 2` runs as its node
// (system:node:<name>), with credentials in its state dir, and with them
// real kubectl may write its own Node and the pods bound to it but gets
// kube's 403 for the other node's Node and pods, for a Secret no pod of
// it uses, for creating pods in kube-system and for a token bound to the
// other node's pod (Node authorizer and NodeRestriction). The cluster DNS
// reads the API as system:dnsplane:cluster-dns, which may not read Secrets
// nor write. Meanwhile Deployment → pods → EndpointSlice → DNS works with
// every role on its own identity. Before, every agent was the
// admin, and a node could change any Node and pod.
func TestNodeIdentities(t *testing.T) {
	requireRoot(t)
	requireKubectl(t)
	c := startNodesUp(t, 2, 67, 68)
	admin := c.Kubeconfig
	client := clientFor(t, admin)
	node1 := filepath.Join(nodeplan.StateDir(c.DataDir, "node-1"), "pki", "kubelet.kubeconfig")

	ns := newNamespace(t, admin)
	mustKubectl(t, admin, "", "create", "deployment", "web", "-n", ns, "--image=example", "--replicas=4")
	mustKubectl(t, admin, "", "expose", "deployment", "web", "-n", ns, "--port=80")
	mustKubectl(t, admin, "", "-n", ns, "create", "secret", "generic", "unused", "--from-literal=k=v")
	rolloutStatus(t, admin, ns, "deployment/web")
	pods := waitRunning(t, client, ns, "app=web", 4)
	on := map[string]corev1.Pod{}
	for _, p := range pods {
		on[p.Spec.NodeName] = p
	}
	if _, ok := on["node-1"]; !ok {
		t.Fatalf("no pod of web on node-1: %v", on)
	}
	if _, ok := on["node-2"]; !ok {
		t.Fatalf("no pod of web on node-2: %v", on)
	}
	mine, theirs := on["node-1"].Name, on["node-2"].Name

	wantKubectl(t, node1, "", ok("system:node:node-1"), "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}{\"\\n\"}")
	// Its own Node and the pods bound to it.
	wantKubectl(t, node1, "", ok("node/node-1 patched"), "patch", "node", "node-1", "--type=merge", "-p", `{"metadata":{"annotations":{"e2e":"mine"}}}`)
	// kubectl patch reads pods/status first, which no node may (nor in
	// kube): the agent writes status with PUT, and so does replace.
	mineJSON := mustKubectl(t, node1, "", "-n", ns, "get", "pod", mine, "-o", "json")
	wantKubectl(t, node1, mineJSON, ok("pod/"+mine+" replaced"), "-n", ns, "replace", "--subresource=status", "-f", "-")
	wantKubectl(t, node1, "", ok("pod/"+mine), "-n", ns, "get", "pod", mine, "-o", "name")
	// Not the other node's.
	wantKubectl(t, node1, "", failed(`Error from server (Forbidden): nodes "node-2" is forbidden: User "system:node:node-1" cannot get resource "nodes" in API group "" at the cluster scope: node: node 'node-1' cannot read 'node-2', only its own Node object`),
		"patch", "node", "node-2", "--type=merge", "-p", `{"metadata":{"annotations":{"e2e":"theirs"}}}`)
	// Writing without reading first (PUT of what the admin read) meets
	// NodeRestriction.
	theirNode := mustKubectl(t, admin, "", "get", "node", "node-2", "-o", "json")
	wantKubectl(t, node1, theirNode, failed(`Error from server (Forbidden): error when replacing "STDIN": nodes "node-2" is forbidden: node "node-1" is not allowed to modify node "node-2"`),
		"replace", "-f", "-")
	wantKubectl(t, node1, "", failed(`Error from server (Forbidden): nodes "node-1" is forbidden: is not allowed to modify labels: node-role.kubernetes.io/control-plane`),
		"label", "node", "node-1", "node-role.kubernetes.io/control-plane=")
	theirsJSON := mustKubectl(t, admin, "", "-n", ns, "get", "pod", theirs, "-o", "json")
	wantKubectl(t, node1, theirsJSON, failed(fmt.Sprintf(`Error from server (Forbidden): error when replacing "STDIN": pods %q is forbidden: node "node-1" can only update pod status for pods with spec.nodeName set to itself`, theirs)),
		"-n", ns, "replace", "--subresource=status", "-f", "-")
	wantKubectl(t, node1, "", failed(fmt.Sprintf(`Error from server (Forbidden): pods %q is forbidden: node "node-1" can only delete pods with spec.nodeName set to itself`, theirs)),
		"-n", ns, "delete", "pod", theirs, "--wait=false")
	wantKubectl(t, node1, "", failed(fmt.Sprintf(`Error from server (Forbidden): pods %q is forbidden: User "system:node:node-1" cannot get resource "pods" in API group "" in the namespace %q: node: no relationship found between node 'node-1' and this object`, theirs, ns)),
		"-n", ns, "get", "pod", theirs, "-o", "name")
	wantKubectl(t, node1, "", failed(fmt.Sprintf(`Error from server (Forbidden): secrets "unused" is forbidden: User "system:node:node-1" cannot get resource "secrets" in API group "" in the namespace %q: node: no relationship found between node 'node-1' and this object`, ns)),
		"-n", ns, "get", "secret", "unused", "-o", "name")
	wantKubectl(t, node1, "", failed(`Error from server (Forbidden): pods "intruder" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "node-1" can only create mirror pods`),
		"-n", "kube-system", "run", "intruder", "--image=example", "--overrides", `{"spec":{"nodeName":"node-1"}}`)

	// Tokens: node-1 gets one bound to its own pod, not to node-2's
	// (NodeRestriction), for pods that run as runner with a projected
	// token volume (ServiceAccountNodeAudienceRestriction).
	mustKubectl(t, admin, "", "-n", ns, "create", "serviceaccount", "runner")
	uid := map[string]string{}
	for _, n := range []string{"node-1", "node-2"} {
		name := "tok-" + n
		mustKubectl(t, admin, "", "-n", ns, "run", name, "--image=example", "--labels=app=tok", "--overrides",
			`{"spec":{"nodeName":"`+n+`","serviceAccountName":"runner","volumes":[{"name":"token","projected":{"sources":[{"serviceAccountToken":{"path":"token"}}]}}]}}`)
		uid[n] = mustKubectl(t, admin, "", "-n", ns, "get", "pod", name, "-o", "jsonpath={.metadata.uid}")
	}
	waitRunning(t, client, ns, "app=tok", 2)
	tokenFor := func(n string) []string {
		return []string{"-n", ns, "create", "token", "runner", "--bound-object-kind=Pod", "--bound-object-name=tok-" + n, "--bound-object-uid=" + uid[n]}
	}
	// The Node authorizer's graph learns of tok-node-1 from an informer.
	eventually(t, 30*time.Second, 100*time.Millisecond, func() (bool, string) {
		out, errOut, code := kubectl(t, node1, "", tokenFor("node-1")...)
		return code == 0 && strings.Count(strings.TrimSpace(out), ".") == 2, errOut
	})
	wantKubectl(t, node1, "", failed(`error: failed to create token: serviceaccounts "runner" is forbidden: node requested token bound to a pod scheduled on a different node`),
		tokenFor("node-2")...)

	// kubectl exec reaches node-1's exec server, which looks the pod up
	// with the node's credentials.
	if out := mustKubectl(t, admin, "", "-n", ns, "exec", mine, "--", "cat", "/etc/resolv.conf"); !strings.Contains(out, "nameserver "+c.cacheOf["node-1"]) {
		t.Errorf("kubectl exec into %s: resolv.conf\n%s\nwithout node-1's cache %s", mine, out, c.cacheOf["node-1"])
	}

	// The controllers are their service accounts (upstream's
	// --use-service-account-credentials): each one exists, and creating
	// the pods was the ReplicaSet controller's right, not the controller
	// manager's.
	for _, sa := range []string{"deployment-controller", "replicaset-controller", "endpointslice-controller"} {
		wantKubectl(t, admin, "", ok("serviceaccount/"+sa), "-n", "kube-system", "get", "serviceaccount", sa, "-o", "name")
	}
	wantKubectl(t, admin, "", ok("yes"), "auth", "can-i", "create", "pods", "-n", ns, "--as=system:serviceaccount:kube-system:replicaset-controller")
	wantKubectl(t, admin, "", run{stdout: "no\n", exit: 1}, "auth", "can-i", "create", "pods", "-n", ns, "--as=system:kube-controller-manager")
	wantKubectl(t, admin, "", run{stdout: "no\n", exit: 1}, "auth", "can-i", "get", "secrets", "-n", "kube-system", "--as=system:dnsplane:dns-operator")
	wantKubectl(t, admin, "", ok("yes"), "auth", "can-i", "update", "configmaps", "-n", "dnsplane-system", "--as=system:dnsplane:dns-operator")

	// A node's request for a new client certificate of its own is
	// approved by upstream's approving controller once a binding lets
	// nodes renew (kubeadm's), then signed by the signing controller.
	// Before, the approving controller did not run.
	mustKubectl(t, admin, "", "create", "clusterrolebinding", "nodes-renew", "--group=system:nodes",
		"--clusterrole=system:certificates.k8s.io:certificatesigningrequests:selfnodeclient")
	csr := fmt.Sprintf(`apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: node-1-renewal}
spec:
  signerName: kubernetes.io/kube-apiserver-client-kubelet
  usages: [digital signature, client auth]
  request: %s
`, nodeCSR(t, "node-1"))
	wantKubectl(t, node1, csr, ok("certificatesigningrequest.certificates.k8s.io/node-1-renewal created"), "create", "-f", "-")
	eventually(t, 30*time.Second, 100*time.Millisecond, func() (bool, string) {
		out, _, _ := kubectl(t, admin, "", "get", "csr", "node-1-renewal", "-o", `jsonpath={.status.conditions[0].reason} {.status.certificate}`)
		reason, cert, _ := strings.Cut(out, " ")
		return reason == "AutoApproved" && cert != "", out
	})

	// The cluster DNS is system:dnsplane:cluster-dns: the Corefile names
	// its kubeconfig, not the admin's, and it may read what CoreDNS's
	// kubernetes plugin watches, and write nothing.
	dnsKubeconfig := filepath.Join(c.DataDir, "pki", "cluster-dns.kubeconfig")
	if corefile := mustKubectl(t, admin, "", "-n", "dnsplane-system", "get", "configmap", "dns-default", "-o", "jsonpath={.data.Corefile}"); !strings.Contains(corefile, "kubeconfig "+dnsKubeconfig+"\n") {
		t.Errorf("the Corefile does not name %s:\n%s", dnsKubeconfig, corefile)
	}
	wantKubectl(t, dnsKubeconfig, "", ok("system:dnsplane:cluster-dns"), "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}{\"\\n\"}")
	wantKubectl(t, dnsKubeconfig, "", ok("yes"), "auth", "can-i", "watch", "endpointslices.discovery.k8s.io", "--all-namespaces")
	wantKubectl(t, dnsKubeconfig, "", failed(`Error from server (Forbidden): secrets is forbidden: User "system:dnsplane:cluster-dns" cannot list resource "secrets" in API group "" in the namespace "kube-system"`),
		"-n", "kube-system", "get", "secrets")
	wantKubectl(t, dnsKubeconfig, "", failed(`error: failed to create configmap: configmaps is forbidden: User "system:dnsplane:cluster-dns" cannot create resource "configmaps" in API group "" in the namespace "dnsplane-system"`),
		"-n", "dnsplane-system", "create", "configmap", "x")

	// The cluster still works end to end: the Service's EndpointSlice
	// names the four pods, and the cluster DNS and node-1's cache answer.
	svcIP := mustKubectl(t, admin, "", "get", "service", "web", "-n", ns, "-o", "jsonpath={.spec.clusterIP}")
	eventually(t, 30*time.Second, 100*time.Millisecond, func() (bool, string) {
		out, _, _ := kubectl(t, admin, "", "-n", ns, "get", "endpointslices", "-l", "kubernetes.io/service-name=web", "-o", "jsonpath={.items[*].endpoints[*].addresses[0]}")
		return len(strings.Fields(out)) == 4, out
	})
	for _, addr := range []string{c.ClusterDNS, c.cacheOf["node-1"] + ":53"} {
		eventually(t, 30*time.Second, 100*time.Millisecond, func() (bool, string) {
			ip, err := lookupA(addr, "web."+ns+".svc.cluster.local.")
			return err == nil && ip == svcIP, fmt.Sprintf("%s: %q %v, want %s", addr, ip, err, svcIP)
		})
	}
}

// nodeCSR is a base64 PEM certificate request for node's client
// certificate, as a kubelet renewing its own would make.
func nodeCSR(t *testing.T, node string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}},
	}, key)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
}
