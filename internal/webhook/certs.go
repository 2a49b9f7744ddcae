package webhook

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/client-go/util/retry"
)

// Keys of the certificate Secret: kubernetes.io/tls's two, plus the CA
// (ca.crt holds every CA clients should trust: the signing one first, and
// during a CA rotation the previous one until it expires).
const (
	secretCACert = "ca.crt"
	secretCAKey  = "ca.key"
)

// CertConfig says where the webhook's certificates live and who must trust
// them.
type CertConfig struct {
	Client      kubernetes.Interface
	Namespace   string
	SecretName  string
	ServiceName string
	// Configurations whose every webhook gets the CA bundle; "" skips one.
	MutatingConfiguration   string
	ValidatingConfiguration string
	// CertDir, when set, receives tls.crt, tls.key and ca.crt as they
	// change, for tools that read files (curl, a sidecar).
	CertDir string
	// CertValidity of a serving certificate (default a year); it is
	// renewed once less than CertRenewBefore (default a third of it)
	// remains, so each one serves about eight months.
	CertValidity    time.Duration
	CertRenewBefore time.Duration
	// CARenewBefore: the CA (valid ten years, client-go's
	// NewSelfSignedCACert) is replaced once less than this remains
	// (default a year, so the old one outlives every certificate it
	// signed by months, and stays in the bundle meanwhile).
	CARenewBefore time.Duration
	// Interval between checks (default a minute). Each check also picks up
	// a rotation another replica made.
	Interval time.Duration
	Now      func() time.Time
	Logger   *slog.Logger
}

// Certs keeps the webhook's CA and serving certificate in a Secret,
// renews them before they expire, serves the current one (GetCertificate:
// a rotation takes effect on the next TLS handshake, without a restart),
// and keeps the caBundle of the webhook configurations current, so an
// install needs no openssl step and no cert-manager.
//
// It is built on client-go's certificate helpers rather than
// open-policy-agent/cert-controller: v0.16.0, its newest, needs
// controller-runtime v0.23, which does not compile against the client-go
// dnsplane builds with (v0.37: its informer handler registrations lack
// HasSyncedChecker), and it would bring a manager and informers on the
// webhook configurations, which dnsplane's own API server does not serve.
type Certs struct {
	cfg  CertConfig
	cert atomic.Pointer[tls.Certificate]
}

// NewCerts checks cfg and fills in its defaults.
func NewCerts(cfg CertConfig) (*Certs, error) {
	if cfg.Client == nil || cfg.Namespace == "" || cfg.SecretName == "" || cfg.ServiceName == "" {
		return nil, errors.New("webhook certificates: client, namespace, secret name and service name are required")
	}
	if cfg.CertValidity <= 0 {
		cfg.CertValidity = 365 * 24 * time.Hour
	}
	if cfg.CertRenewBefore <= 0 {
		cfg.CertRenewBefore = cfg.CertValidity / 3
	}
	if cfg.CARenewBefore <= 0 {
		cfg.CARenewBefore = 365 * 24 * time.Hour
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Certs{cfg: cfg}, nil
}

// DNSNames are the names the serving certificate is valid for: the ones
// kube-apiserver dials a service webhook by (<service>.<namespace>.svc),
// and the longer forms clients inside the cluster use.
func (c *Certs) DNSNames() []string {
	s, ns := c.cfg.ServiceName, c.cfg.Namespace
	return []string{s, s + "." + ns, s + "." + ns + ".svc", s + "." + ns + ".svc.cluster.local"}
}

// GetCertificate is for tls.Config: the current serving certificate.
func (c *Certs) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if cert := c.cert.Load(); cert != nil {
		return cert, nil
	}
	return nil, errors.New("no serving certificate yet")
}

// Ready reports whether a serving certificate is loaded.
func (c *Certs) Ready() error {
	if c.cert.Load() == nil {
		return errors.New("no serving certificate yet")
	}
	return nil
}

// Run syncs every Interval until ctx ends. A failed sync is logged and
// retried at the next tick; the certificate served meanwhile stays.
func (c *Certs) Run(ctx context.Context) {
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := c.Sync(ctx); err != nil {
			c.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "syncing webhook certificates", slog.Any("err", err))
		}
	}, c.cfg.Interval)
}

// bundle is the Secret's content, parsed.
type bundle struct {
	caCerts  []*x509.Certificate // signing CA first
	caKey    crypto.Signer
	cert     *x509.Certificate
	certPEM  []byte
	keyPEM   []byte
	caPEM    []byte
	caKeyPEM []byte
}

// Sync makes one pass: read the Secret, renew what is missing or expiring
// and write it back, load the serving certificate, write CertDir and
// update the configurations' caBundle. Replicas starting together race to
// create the Secret; the loser reads the winner's and adopts it at once.
func (c *Certs) Sync(ctx context.Context) error {
	return retry.OnError(retry.DefaultRetry, func(err error) bool {
		return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)
	}, func() error { return c.sync(ctx) })
}

func (c *Certs) sync(ctx context.Context) error {
	secrets := c.cfg.Client.CoreV1().Secrets(c.cfg.Namespace)
	secret, err := secrets.Get(ctx, c.cfg.SecretName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		secret = nil
	case err != nil:
		return fmt.Errorf("reading Secret %s/%s: %w", c.cfg.Namespace, c.cfg.SecretName, err)
	}
	var b bundle
	if secret != nil {
		b = parseBundle(secret.Data)
	}
	renewed, err := c.renew(&b)
	if err != nil {
		return err
	}
	if renewed {
		data := map[string][]byte{
			corev1.TLSCertKey: b.certPEM, corev1.TLSPrivateKeyKey: b.keyPEM,
			secretCACert: b.caPEM, secretCAKey: b.caKeyPEM,
		}
		if secret == nil {
			secret = &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: c.cfg.SecretName, Namespace: c.cfg.Namespace,
					Labels: map[string]string{"app.kubernetes.io/name": "dnsplane", "app.kubernetes.io/component": "webhook"}},
				Type: corev1.SecretTypeTLS, Data: data,
			}
			// Another replica may create it first: AlreadyExists makes this
			// pass fail, and the next one adopts the winner's.
			if _, err := secrets.Create(ctx, secret, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("creating Secret %s/%s: %w", c.cfg.Namespace, c.cfg.SecretName, err)
			}
		} else {
			secret = secret.DeepCopy()
			secret.Data = data
			// The resourceVersion read above makes a concurrent rotation a
			// Conflict rather than a lost CA.
			if _, err := secrets.Update(ctx, secret, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("updating Secret %s/%s: %w", c.cfg.Namespace, c.cfg.SecretName, err)
			}
		}
		c.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "webhook certificate renewed",
			slog.String("secret", c.cfg.Namespace+"/"+c.cfg.SecretName), slog.Time("notAfter", b.cert.NotAfter))
	}
	pair, err := tls.X509KeyPair(append(slices.Clone(b.certPEM), b.caPEM...), b.keyPEM)
	if err != nil {
		return fmt.Errorf("loading serving certificate: %w", err)
	}
	if cur := c.cert.Load(); cur == nil || !bytes.Equal(cur.Certificate[0], pair.Certificate[0]) {
		c.cert.Store(&pair)
	}
	if err := c.writeFiles(b); err != nil {
		return err
	}
	return c.injectCABundle(ctx, b.caPEM)
}

// parseBundle reads what it can; renew replaces whatever is unusable.
func parseBundle(data map[string][]byte) bundle {
	var b bundle
	if cas, err := certutil.ParseCertsPEM(data[secretCACert]); err == nil {
		b.caCerts, b.caPEM = cas, data[secretCACert]
	}
	if k, err := keyutil.ParsePrivateKeyPEM(data[secretCAKey]); err == nil {
		if s, ok := k.(crypto.Signer); ok {
			b.caKey, b.caKeyPEM = s, data[secretCAKey]
		}
	}
	if certs, err := certutil.ParseCertsPEM(data[corev1.TLSCertKey]); err == nil {
		if _, err := tls.X509KeyPair(data[corev1.TLSCertKey], data[corev1.TLSPrivateKeyKey]); err == nil {
			b.cert, b.certPEM, b.keyPEM = certs[0], data[corev1.TLSCertKey], data[corev1.TLSPrivateKeyKey]
		}
	}
	return b
}

// renew replaces the CA and the serving certificate where they are
// missing, unusable or expiring, and reports whether anything changed.
func (c *Certs) renew(b *bundle) (bool, error) {
	now := c.cfg.Now()
	caOK := len(b.caCerts) > 0 && b.caKey != nil && publicKeyMatches(b.caCerts[0], b.caKey) &&
		now.Before(b.caCerts[0].NotAfter.Add(-c.cfg.CARenewBefore))
	changed := false
	if !caOK {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return false, fmt.Errorf("generating CA key: %w", err)
		}
		ca, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: fmt.Sprintf("dnsplane-webhook-ca@%d", now.Unix())}, key)
		if err != nil {
			return false, fmt.Errorf("generating CA: %w", err)
		}
		// Keep trusting the previous CA while it is valid: kube-apiserver
		// may still reach a replica serving a certificate it signed.
		keep := []*x509.Certificate{ca}
		for _, old := range b.caCerts {
			if now.Before(old.NotAfter) {
				keep = append(keep, old)
			}
		}
		if b.caPEM, err = certutil.EncodeCertificates(keep...); err != nil {
			return false, fmt.Errorf("encoding CA: %w", err)
		}
		if b.caKeyPEM, err = keyutil.MarshalPrivateKeyToPEM(key); err != nil {
			return false, fmt.Errorf("encoding CA key: %w", err)
		}
		b.caCerts, b.caKey, changed = keep, key, true
	}
	if !changed && b.cert != nil && c.certValid(b.cert, b.caCerts[0], now) {
		return false, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return false, fmt.Errorf("generating serving key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return false, fmt.Errorf("serial number: %w", err)
	}
	names := c.DNSNames()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: names[2]},
		DNSNames:     names,
		// An hour back for clocks that lag the webhook's.
		NotBefore:   now.Add(-time.Hour).UTC(),
		NotAfter:    now.Add(c.cfg.CertValidity).UTC(),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, b.caCerts[0], key.Public(), b.caKey)
	if err != nil {
		return false, fmt.Errorf("signing serving certificate: %w", err)
	}
	if b.cert, err = x509.ParseCertificate(der); err != nil {
		return false, fmt.Errorf("parsing serving certificate: %w", err)
	}
	if b.certPEM, err = certutil.EncodeCertificates(b.cert); err != nil {
		return false, err
	}
	if b.keyPEM, err = keyutil.MarshalPrivateKeyToPEM(key); err != nil {
		return false, fmt.Errorf("encoding serving key: %w", err)
	}
	return true, nil
}

// certValid: signed by the current CA, for our names, and not expiring.
func (c *Certs) certValid(cert, ca *x509.Certificate, now time.Time) bool {
	if cert.CheckSignatureFrom(ca) != nil || now.After(cert.NotAfter.Add(-c.cfg.CertRenewBefore)) {
		return false
	}
	for _, n := range c.DNSNames() {
		if cert.VerifyHostname(n) != nil {
			return false
		}
	}
	return true
}

func publicKeyMatches(cert *x509.Certificate, key crypto.Signer) bool {
	type equaler interface{ Equal(crypto.PublicKey) bool }
	pub, ok := key.Public().(equaler)
	return ok && pub.Equal(cert.PublicKey)
}

func (c *Certs) writeFiles(b bundle) error {
	if c.cfg.CertDir == "" {
		return nil
	}
	if err := os.MkdirAll(c.cfg.CertDir, 0o700); err != nil {
		return fmt.Errorf("cert dir: %w", err)
	}
	for name, data := range map[string][]byte{corev1.TLSCertKey: b.certPEM, corev1.TLSPrivateKeyKey: b.keyPEM, secretCACert: b.caPEM} {
		path := filepath.Join(c.cfg.CertDir, name)
		if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, data) {
			continue
		}
		// Rename, so a reader never sees half a file.
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, data, 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		if err := os.Rename(tmp, path); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return nil
}

// injectCABundle sets caBundle on every webhook of both configurations. A
// configuration that does not exist yet (the chart installs it after the
// Deployment starts, or the user removed it) is skipped: the next sync
// tries again.
func (c *Certs) injectCABundle(ctx context.Context, ca []byte) error {
	admission := c.cfg.Client.AdmissionregistrationV1()
	return errors.Join(
		injectInto(ctx, admission.MutatingWebhookConfigurations(), "MutatingWebhookConfiguration", c.cfg.MutatingConfiguration, ca,
			func(cfg *admissionregistrationv1.MutatingWebhookConfiguration) []*admissionregistrationv1.WebhookClientConfig {
				out := make([]*admissionregistrationv1.WebhookClientConfig, len(cfg.Webhooks))
				for i := range cfg.Webhooks {
					out[i] = &cfg.Webhooks[i].ClientConfig
				}
				return out
			}),
		injectInto(ctx, admission.ValidatingWebhookConfigurations(), "ValidatingWebhookConfiguration", c.cfg.ValidatingConfiguration, ca,
			func(cfg *admissionregistrationv1.ValidatingWebhookConfiguration) []*admissionregistrationv1.WebhookClientConfig {
				out := make([]*admissionregistrationv1.WebhookClientConfig, len(cfg.Webhooks))
				for i := range cfg.Webhooks {
					out[i] = &cfg.Webhooks[i].ClientConfig
				}
				return out
			}),
	)
}

// configurationClient is what injectInto needs of the typed client of one
// webhook configuration kind.
type configurationClient[T any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
}

// injectInto sets ca on every client config of the configuration name of
// one kind ("" for none), writing only when one differs.
func injectInto[T any](ctx context.Context, api configurationClient[T], kind, name string, ca []byte, clientConfigs func(T) []*admissionregistrationv1.WebhookClientConfig) error {
	if name == "" {
		return nil
	}
	cfg, err := api.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("reading %s %s: %w", kind, name, err)
	}
	changed := false
	for _, cc := range clientConfigs(cfg) {
		if !bytes.Equal(cc.CABundle, ca) {
			cc.CABundle, changed = ca, true
		}
	}
	if !changed {
		return nil
	}
	if _, err := api.Update(ctx, cfg, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating caBundle of %s %s: %w", kind, name, err)
	}
	return nil
}
