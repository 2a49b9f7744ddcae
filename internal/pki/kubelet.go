package pki

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// Names of the exec path's certificates: the API server's client
// certificate towards node agents (kubeadm's apiserver-kubelet-client) and
// an agent's serving certificate (kubelet's kubelet.crt).
const (
	kubeletClientCertName = "apiserver-kubelet-client.crt"
	kubeletClientKeyName  = "apiserver-kubelet-client.key"
	agentServingCertName  = "agent.crt"
	agentServingKeyName   = "agent.key"

	// KubeletClientUser and KubeletClientGroup are who the API server is
	// towards node agents, as kubeadm names it.
	KubeletClientUser  = "kube-apiserver-kubelet-client"
	KubeletClientGroup = "system:masters"
)

// EnsureKubeletClient makes dir hold the API server's client certificate
// towards node agents (CN kube-apiserver-kubelet-client, O system:masters),
// signed by b's CA, and returns its files. An existing one is kept while it
// is signed by the CA, names that user and group and is not close to
// expiry.
func EnsureKubeletClient(dir string, b *Bundle) (certFile, keyFile string, err error) {
	if b == nil || b.caKey == nil {
		return "", "", errors.New("pki: bundle has no CA key; create it with Ensure")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", fmt.Errorf("pki: %w", err)
	}
	certFile, keyFile = filepath.Join(dir, kubeletClientCertName), filepath.Join(dir, kubeletClientKeyName)
	ca := keyPair{cert: b.CA, key: b.caKey}
	if kp, err := loadPair(certFile, keyFile); err == nil && leafUsable(kp.cert, b.CA, b.opts) &&
		kp.cert.Subject.CommonName == KubeletClientUser && slices.Equal(organizations(kp.cert.Subject), []string{KubeletClientGroup}) {
		return certFile, keyFile, restrictMode(keyFile)
	}
	kp, err := newClientCert(ca, KubeletClientUser, []string{KubeletClientGroup}, b.opts.now(), b.opts.clientValidity)
	if err != nil {
		return "", "", fmt.Errorf("pki: %w", err)
	}
	if err := writePair(certFile, keyFile, kp); err != nil {
		return "", "", fmt.Errorf("pki: %w", err)
	}
	return certFile, keyFile, nil
}

// EnsureAgentServing makes dir hold a node agent's serving certificate for
// hosts (plus localhost, 127.0.0.1 and ::1), signed by b's CA, which the
// API server verifies when it proxies kubectl exec to the agent. It is
// renewed as the API server's own (Ensure).
func EnsureAgentServing(dir string, b *Bundle, hosts []string) (certFile, keyFile string, err error) {
	if b == nil || b.caKey == nil {
		return "", "", errors.New("pki: bundle has no CA key; create it with Ensure")
	}
	sans, err := parseHosts(hosts)
	if err != nil {
		return "", "", fmt.Errorf("pki: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", fmt.Errorf("pki: %w", err)
	}
	certFile, keyFile = filepath.Join(dir, agentServingCertName), filepath.Join(dir, agentServingKeyName)
	ca := keyPair{cert: b.CA, key: b.caKey}
	if kp, err := loadPair(certFile, keyFile); err == nil && servingUsable(kp.cert, b.CA, sans, b.opts) {
		return certFile, keyFile, restrictMode(keyFile)
	}
	kp, err := newServingCertFor(ca, "dnsplane-agent", sans, b.opts.now(), b.opts.servingValidity)
	if err != nil {
		return "", "", fmt.Errorf("pki: %w", err)
	}
	if err := writePair(certFile, keyFile, kp); err != nil {
		return "", "", fmt.Errorf("pki: %w", err)
	}
	return certFile, keyFile, nil
}

// leafUsable: signed by ca, already valid and not within renewBefore of
// expiry.
func leafUsable(cert, ca *x509.Certificate, o options) bool {
	now := o.now()
	return cert.CheckSignatureFrom(ca) == nil && !now.Before(cert.NotBefore) && !now.Add(o.renewBefore).After(cert.NotAfter)
}

func organizations(n pkix.Name) []string {
	var out []string
	for _, a := range n.Names {
		if a.Type.Equal([]int{2, 5, 4, 10}) {
			if s, ok := a.Value.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}
