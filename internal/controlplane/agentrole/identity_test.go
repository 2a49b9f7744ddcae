package agentrole_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/agentrole"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
)

// TestAgentRunsAsItsNode: the agent of `up` is system:node:<name> in
// system:nodes, not the admin, and still registers its Node under
// Node,RBAC; its credentials cannot read another node's Node (upstream's
// Node authorizer).
func TestAgentRunsAsItsNode(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	resolv := filepath.Join(dir, "resolv.conf")
	if err := os.WriteFile(resolv, []byte("nameserver 192.0.2.1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	certDir := filepath.Join(dir, "node-a", "pki")
	role := agentrole.New(agentrole.Config{
		NodeName: "node-a", ClusterDomain: "cluster.local", ResolvConf: resolv, PodCIDR: "10.244.7.0/24",
		StateDir: filepath.Join(dir, "node-a"), CertDir: certDir, Named: true,
		DNS: func() []string { return []string{"127.0.0.1:53"} },
	})
	ts := controlplanetest.StartTestServer(t, controlplane.Config{DataDir: filepath.Join(dir, "data"), Roles: []controlplane.Role{role}})

	kubeconfig := agentrole.KubeconfigPath(certDir)
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatalf("the agent's kubeconfig: %v", err)
	}
	block, _ := pem.Decode(cfg.CertData)
	if block == nil {
		t.Fatal("the agent's kubeconfig has no client certificate")
	}
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if leaf.Subject.CommonName != "system:node:node-a" || len(leaf.Subject.Organization) != 1 || leaf.Subject.Organization[0] != "system:nodes" {
		t.Errorf("agent identity %v, want CN system:node:node-a O system:nodes", leaf.Subject)
	}

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := ts.Client.CoreV1().Nodes().Get(ctx, "node-a", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatalf("the agent registered no Node: %v", err)
	}
	node, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := node.CoreV1().Nodes().Get(ctx, "node-a", metav1.GetOptions{}); err != nil {
		t.Errorf("the node reading its own Node: %v", err)
	}
	if _, err := node.CoreV1().Nodes().Get(ctx, "node-b", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the node reading another Node: %v, want 403", err)
	}
}
