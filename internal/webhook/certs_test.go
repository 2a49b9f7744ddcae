package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	certutil "k8s.io/client-go/util/cert"

	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
	"github.com/dnsplane/dnsplane/internal/webhook/poddns"
)

// serveTLS starts the webhook's handler on 127.0.0.1 with certs and returns
// its address.
func serveTLS(t *testing.T, certs *Certs) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rev := poddns.NewReviewer(poddns.Cluster{ClusterDNS: []string{"10.96.0.10"}, ClusterDomain: "cluster.local"}, nil)
	routes := Routes{Mutate: map[schema.GroupVersionResource]Reviewer{}, Validate: map[schema.GroupVersionResource]Reviewer{}}
	for gvr := range poddns.Kinds() {
		routes.Mutate[gvr], routes.Validate[gvr] = rev.Mutate, rev.Validate
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, Handler(routes, certs.Ready, nil), certs.GetCertificate, nil) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// reviewOverTLS posts an AdmissionReview for an autopath pod, trusting only
// caBundle and checking the name kube-apiserver checks
// (<service>.<namespace>.svc).
func reviewOverTLS(t *testing.T, addr string, caBundle []byte, serverName string, now func() time.Time) (*admissionv1.AdmissionReview, *x509.Certificate) {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caBundle) {
		t.Fatalf("caBundle holds no certificate: %q", caBundle)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: serverName, MinVersion: tls.VersionTLS12, Time: now}}}
	pod := corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns1"},
		Spec: corev1.PodSpec{DNSPolicy: "ClusterFirstWithAutopath", Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	raw, _ := json.Marshal(pod)
	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "uid-1", Resource: metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
			Namespace: "ns1", Name: "p", Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: raw}},
	}
	body, _ := json.Marshal(review)
	resp, err := client.Post("https://"+addr+"/mutate", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("POST /mutate over TLS: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /mutate: %s: %s", resp.Status, b)
	}
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("decoding response: %v: %s", err, b)
	}
	return &out, resp.TLS.PeerCertificates[0]
}

func checkReview(t *testing.T, out *admissionv1.AdmissionReview) {
	t.Helper()
	if out.Response == nil || out.Response.UID != "uid-1" || !out.Response.Allowed || len(out.Response.Patch) == 0 {
		t.Fatalf("response %+v, want the autopath pod allowed with a patch", out.Response)
	}
}

// TestCertsAgainstAPIServer: against dnsplane's own API server the webhook
// creates its Secret (CA and serving certificate), serves with it, and a
// client that trusts only the Secret's CA bundle gets a valid review.
func TestCertsAgainstAPIServer(t *testing.T) {
	t.Parallel()
	ts := controlplanetest.StartTestServer(t, controlplane.Config{})
	ctx := t.Context()
	if _, err := ts.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dnsplane-system"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	// Two replicas starting together race to create the Secret; both
	// must end up serving the one that won.
	var replicas []*Certs
	for range 2 {
		c, err := NewCerts(CertConfig{Client: ts.Client, Namespace: "dnsplane-system", SecretName: "dnsplane-webhook-certs",
			ServiceName: "dnsplane-webhook", CertDir: t.TempDir(), Interval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		replicas = append(replicas, c)
	}
	errs := make(chan error, len(replicas))
	for _, c := range replicas {
		go func() { errs <- c.Sync(ctx) }()
	}
	for range replicas {
		if err := <-errs; err != nil {
			t.Fatalf("Sync: %v", err)
		}
	}
	secret, err := ts.Client.CoreV1().Secrets("dnsplane-system").Get(ctx, "dnsplane-webhook-certs", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("no Secret: %v", err)
	}
	if secret.Type != corev1.SecretTypeTLS || len(secret.Data["ca.crt"]) == 0 || len(secret.Data["tls.crt"]) == 0 {
		t.Fatalf("Secret type %s keys %v", secret.Type, keys(secret.Data))
	}
	stored, err := certutil.ParseCertsPEM(secret.Data["tls.crt"])
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range replicas {
		cert, err := c.GetCertificate(nil)
		if err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
		if !bytes.Equal(cert.Certificate[0], stored[0].Raw) {
			t.Errorf("replica %d serves a certificate that is not the Secret's", i)
		}
	}
	certs := replicas[0]
	addr := serveTLS(t, certs)
	out, _ := reviewOverTLS(t, addr, secret.Data["ca.crt"], "dnsplane-webhook.dnsplane-system.svc", nil)
	checkReview(t, out)
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestCertsRotationAndCABundle: the caBundle of every webhook in both
// configurations follows the Secret; a serving certificate near its end is
// renewed and served on the next handshake without a restart; a CA near
// its end is replaced, with the old one kept in the bundle meanwhile.
// Configurations go through client-go's fake clientset: dnsplane's API
// server does not serve admissionregistration's webhook configurations.
func TestCertsRotationAndCABundle(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	webhooks := func(n int) []admissionregistrationv1.MutatingWebhook {
		var out []admissionregistrationv1.MutatingWebhook
		for i := range n {
			out = append(out, admissionregistrationv1.MutatingWebhook{Name: fmt.Sprintf("w%d.dns.dnsplane.io", i)})
		}
		return out
	}
	vwebhooks := []admissionregistrationv1.ValidatingWebhook{{Name: PodWebhookName}, {Name: WorkloadWebhookName}, {Name: DNSWebhookName}}
	client := fake.NewClientset(
		&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "dnsplane"}, Webhooks: webhooks(2)},
		&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "dnsplane"}, Webhooks: vwebhooks},
	)
	now := time.Now()
	clock := func() time.Time { return now }
	certs, err := NewCerts(CertConfig{Client: client, Namespace: "dnsplane-system", SecretName: "s", ServiceName: "dnsplane-webhook",
		MutatingConfiguration: "dnsplane", ValidatingConfiguration: "dnsplane", Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	if err := certs.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	ca1 := secretData(t, client)["ca.crt"]
	checkBundles(t, client, ca1)
	addr := serveTLS(t, certs)
	out, first := reviewOverTLS(t, addr, ca1, "dnsplane-webhook.dnsplane-system.svc", clock)
	checkReview(t, out)

	// A sync with nothing due changes nothing.
	if err := certs.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := secretData(t, client)["tls.crt"]; !bytes.Equal(got, pemOf(first)) {
		t.Fatal("serving certificate changed without being due")
	}

	// Nine months on, the serving certificate is due; the CA is not.
	now = now.Add(270 * 24 * time.Hour)
	if err := certs.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if ca := secretData(t, client)["ca.crt"]; !bytes.Equal(ca, ca1) {
		t.Fatal("CA replaced with a serving certificate renewal")
	}
	_, second := reviewOverTLS(t, addr, ca1, "dnsplane-webhook.dnsplane-system.svc.cluster.local", clock)
	if second.Equal(first) || !second.NotAfter.After(first.NotAfter) {
		t.Fatalf("served certificate not renewed: %v then %v", first.NotAfter, second.NotAfter)
	}

	// Nine and a half years on, the CA is due: a new one signs, the old
	// one stays trusted, the configurations get both.
	now = now.Add(9*365*24*time.Hour + 90*24*time.Hour)
	if err := certs.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	ca2 := secretData(t, client)["ca.crt"]
	if bytes.Equal(ca2, ca1) || !bytes.Contains(ca2, bytes.TrimSpace(ca1)) {
		t.Fatalf("CA bundle after CA rotation does not hold a new CA and the old one")
	}
	checkBundles(t, client, ca2)
}

func pemOf(c *x509.Certificate) []byte {
	out, _ := certutil.EncodeCertificates(c)
	return out
}

func secretData(t *testing.T, c kubernetes.Interface) map[string][]byte {
	t.Helper()
	s, err := c.CoreV1().Secrets("dnsplane-system").Get(t.Context(), "s", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s.Data
}

func checkBundles(t *testing.T, c kubernetes.Interface, ca []byte) {
	t.Helper()
	m, err := c.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(t.Context(), "dnsplane", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range m.Webhooks {
		if !bytes.Equal(w.ClientConfig.CABundle, ca) {
			t.Errorf("mutating webhook %s: caBundle not current", w.Name)
		}
	}
	v, err := c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), "dnsplane", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range v.Webhooks {
		if !bytes.Equal(w.ClientConfig.CABundle, ca) {
			t.Errorf("validating webhook %s: caBundle not current", w.Name)
		}
	}
}
