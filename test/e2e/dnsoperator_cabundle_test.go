package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/dnsplane/dnsplane/internal/testkit"
)

// testCA makes a CA and a server certificate for serverName signed by it;
// it returns the CA's PEM and the server's tls.Certificate.
func testCA(t *testing.T, serverName string) (string, tls.Certificate) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "dnsplane test CA " + time.Now().Format(time.RFC3339Nano)},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: serverName}, DNSNames: []string{serverName},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}))
	return caPEM, tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// dotServer is a DNS over TLS server on addr answering every A query
// with ip, with cert.
func dotServer(t *testing.T, addr, ip string, cert tls.Certificate) *dns.Server {
	t.Helper()
	l, err := tls.Listen("tcp", addr, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{Listener: l, Net: "tcp-tls", Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		if len(r.Question) == 1 && r.Question[0].Qtype == dns.TypeA {
			m.Answer = append(m.Answer, &dns.A{
				Hdr: dns.RR_Header{Name: r.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 0},
				A:   net.ParseIP(ip),
			})
		}
		_ = w.WriteMsg(m)
	})}
	go func() { _ = srv.ActivateAndServe() }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return srv
}

// TestDNSOperatorCABundle: a TLS forwarder whose caBundle names a
// ConfigMap of dnsplane-system reaches a DNS over TLS nameserver with a
// certificate of a private CA, through `dnsplane up`. Before the
// ConfigMap exists the forwarder is left out and Degraded names it; a
// changed bundle (the server's certificate from another CA) is reloaded.
func TestDNSOperatorCABundle(t *testing.T) {
	requireKubectl(t)
	const serverName = "dns.tls.test"
	ca1, cert1 := testCA(t, serverName)
	addr := fmt.Sprintf("127.0.0.1:%d", testkit.FreeUDPTCPPort(t, "127.0.0.1"))
	srv := dotServer(t, addr, "192.0.2.53", cert1)
	def := startNameserver(t, ".", "192.0.2.100")
	u := startUp(t, filepath.Join(t.TempDir(), "data"), nil, "--upstream", def.Addr)

	mustKubectl(t, u.Kubeconfig, fmt.Sprintf(`apiVersion: operator.dnsplane.io/v1
kind: DNS
metadata:
  name: default
spec:
  pluginConfig:
    forwardPlugins:
    - domain: tls.test
      nameServers: [%q]
      transportConfig:
        transport: TLS
        tls:
          serverName: %s
          caBundle: {name: dot-ca}
`, addr, serverName), "apply", "-f", "-")
	degraded := func() string {
		return mustKubectl(t, u.Kubeconfig, "", "get", "dns", "default", "-o",
			`jsonpath={.status.conditions[?(@.type=="Degraded")].status} {.status.conditions[?(@.type=="Degraded")].message}`)
	}
	eventually(t, 30*time.Second, 100*time.Millisecond, func() (bool, string) {
		d := degraded()
		return strings.HasPrefix(d, "True ") && strings.Contains(d, "caBundle.name") && strings.Contains(d, "dot-ca"), d
	})

	caFile := writeFile(t, "ca1.crt", ca1)
	mustKubectl(t, u.Kubeconfig, "", "create", "configmap", "-n", "dnsplane-system", "dot-ca", "--from-file=ca-bundle.crt="+caFile)
	created := time.Now()
	eventually(t, 30*time.Second, 50*time.Millisecond, func() (bool, string) {
		ip, err := lookupA(u.ClusterDNS, "www.tls.test.")
		return err == nil && ip == "192.0.2.53", fmt.Sprintf("%q, %v", ip, err)
	})
	t.Logf("CA bundle ConfigMap created → first answer over TLS: %v", time.Since(created).Round(time.Millisecond))
	if d := degraded(); !strings.HasPrefix(d, "False ") {
		t.Errorf("Degraded after the bundle exists: %s", d)
	}
	corefile := mustKubectl(t, u.Kubeconfig, "", "get", "configmap", "-n", "dnsplane-system", "dns-default", "-o", "jsonpath={.data.Corefile}")
	if !strings.HasPrefix(corefile, "# ca-bundle dot-ca sha256:") || !strings.Contains(corefile, "ca-dot-ca.crt") {
		t.Errorf("published Corefile:\n%s", corefile)
	}
	first := strings.SplitN(corefile, "\n", 2)[0]

	// The server's certificate from another CA: the old bundle cannot
	// verify it until the ConfigMap has the new one.
	ca2, cert2 := testCA(t, serverName)
	_ = srv.Shutdown()
	dotServer(t, addr, "192.0.2.54", cert2)
	mustKubectl(t, u.Kubeconfig, ca2Manifest(ca2), "apply", "-f", "-")
	changed := time.Now()
	eventually(t, 30*time.Second, 50*time.Millisecond, func() (bool, string) {
		ip, err := lookupA(u.ClusterDNS, "www.tls.test.")
		return err == nil && ip == "192.0.2.54", fmt.Sprintf("%q, %v", ip, err)
	})
	t.Logf("CA bundle changed → first answer verified with the new CA: %v", time.Since(changed).Round(time.Millisecond))
	corefile = mustKubectl(t, u.Kubeconfig, "", "get", "configmap", "-n", "dnsplane-system", "dns-default", "-o", "jsonpath={.data.Corefile}")
	if strings.SplitN(corefile, "\n", 2)[0] == first {
		t.Errorf("the Corefile's bundle hash did not change: %s", first)
	}
}

func ca2Manifest(ca string) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dot-ca\n  namespace: dnsplane-system\ndata:\n  ca-bundle.crt: |\n")
	for _, l := range strings.Split(strings.TrimSpace(ca), "\n") {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}
