package pki

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Identities of the roles `up` runs, as kube's components are named in
// upstream's bootstrap policy (plugin/pkg/auth/authorizer/rbac/bootstrappolicy):
// the Node authorizer knows a node by NodeUserPrefix+<name> in NodesGroup, and
// the system:kube-scheduler ClusterRoleBindings bind SchedulerUser.
const (
	NodeUserPrefix         = "system:node:"
	NodesGroup             = "system:nodes"
	SchedulerUser          = "system:kube-scheduler"
	ControllerManagerUser  = "system:kube-controller-manager"
	roleKubeconfigFileMode = 0o600
)

// WriteRoleKubeconfig writes path, a kubeconfig for serverURL trusting b's
// CA, with a fresh client certificate for user in groups embedded, so a
// role of `up` runs with its own identity instead of the admin's. Written
// at every start (the URL's port changes from start to start), atomically
// and owner-only: it is a credential.
func WriteRoleKubeconfig(path, serverURL string, b *Bundle, user string, groups []string) error {
	if b == nil || b.caKey == nil {
		return errors.New("pki: bundle has no CA key; create it with Ensure")
	}
	if user == "" {
		return errors.New("pki: role kubeconfig needs a user name")
	}
	if u, err := url.Parse(serverURL); err != nil || u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("pki: server URL %q must be https://host[:port]", serverURL)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("pki: create directory for %s: %w", path, err)
	}
	kp, err := newClientCert(keyPair{cert: b.CA, key: b.caKey}, user, groups, b.opts.now(), b.opts.clientValidity)
	if err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	cfg := clientcmdapi.NewConfig()
	cluster := clientcmdapi.NewCluster()
	cluster.Server, cluster.CertificateAuthorityData = serverURL, b.CACertPEM
	auth := clientcmdapi.NewAuthInfo()
	auth.ClientCertificateData, auth.ClientKeyData = kp.certPEM, kp.keyPEM
	ctx := clientcmdapi.NewContext()
	ctx.Cluster, ctx.AuthInfo = kubeconfigEntry, user
	cfg.Clusters[kubeconfigEntry], cfg.AuthInfos[user], cfg.Contexts[kubeconfigEntry] = cluster, auth, ctx
	cfg.CurrentContext = kubeconfigEntry
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return fmt.Errorf("pki: encode kubeconfig %s: %w", path, err)
	}
	if err := writeFileAtomic(path, data, roleKubeconfigFileMode); err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	return nil
}
