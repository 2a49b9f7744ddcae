package pki

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

const (
	tokensName     = "tokens.csv"
	kubeconfigName = "kubeconfig"

	adminUser  = "admin"
	adminUID   = "admin-uid"
	adminGroup = "system:masters"
	// kubeconfigEntry names the cluster, user and context in the kubeconfig.
	kubeconfigEntry = "dnsplane"
)

// EnsureAdmin makes sure <dir>/tokens.csv holds a bearer token for the user
// "admin" in group system:masters and that <dir>/kubeconfig lets kubectl use
// it against serverURL, trusting the bundle's CA. The token is created once;
// an operator's other lines in tokens.csv are kept, and an existing admin
// line is reused. The kubeconfig is owned by dnsplane: it is rewritten
// whenever it differs from what the current URL, CA and token call for, but
// a kubeconfig dnsplane did not write is never overwritten (CheckAdmin).
func EnsureAdmin(dir, serverURL string, b *Bundle) (kubeconfigPath, tokenFile string, err error) {
	if b == nil || len(b.CACertPEM) == 0 {
		return "", "", errors.New("pki: EnsureAdmin needs a bundle with a CA certificate")
	}
	u, err := url.Parse(serverURL)
	if err != nil {
		return "", "", fmt.Errorf("pki: server URL: %w", err)
	}
	if u.Scheme != "https" || u.Host == "" {
		return "", "", fmt.Errorf("pki: server URL %q must be https://host[:port]", serverURL)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", fmt.Errorf("pki: create data directory: %w", err)
	}
	tokenFile = filepath.Join(dir, tokensName)
	token, err := ensureAdminToken(tokenFile)
	if err != nil {
		return "", "", fmt.Errorf("pki: %w", err)
	}
	if err := CheckAdmin(dir); err != nil {
		return "", "", err
	}
	kubeconfigPath = filepath.Join(dir, kubeconfigName)
	if err := ensureKubeconfig(kubeconfigPath, serverURL, b.CACertPEM, token); err != nil {
		return "", "", fmt.Errorf("pki: %w", err)
	}
	return kubeconfigPath, tokenFile, nil
}

func ensureAdminToken(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read token file: %w", err)
	}
	token, found, err := findAdminToken(data)
	if err != nil {
		return "", fmt.Errorf("token file %s: %w", path, err)
	}
	if found {
		return token, restrictMode(path)
	}
	token, err = newToken()
	if err != nil {
		return "", err
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		data = append(data, '\n')
	}
	data = fmt.Appendf(data, "%s,%s,%s,\"%s\"\n", token, adminUser, adminUID, adminGroup)
	if err := writeFileAtomic(path, data, 0o600); err != nil {
		return "", err
	}
	return token, nil
}

// findAdminToken returns the token that the API server will map to the admin
// user, reading the file with the same rules: CSV records, empty tokens
// skipped, and a repeated token belonging to its last record.
func findAdminToken(data []byte) (string, bool, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	owner := make(map[string]string)
	var candidates []string
	for {
		record, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", false, err
		}
		if len(record) < 3 || record[0] == "" {
			continue
		}
		owner[record[0]] = record[1]
		if record[1] == adminUser {
			candidates = append(candidates, record[0])
		}
	}
	for i := len(candidates) - 1; i >= 0; i-- {
		if owner[candidates[i]] == adminUser {
			return candidates[i], true, nil
		}
	}
	return "", false, nil
}

// newToken returns 256 random bits in base64url, which needs no CSV quoting
// and no escaping in a header.
func newToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate admin token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// ensureKubeconfig writes the admin kubeconfig: the API server's URL and CA
// and the admin token in the "dnsplane" entries. What the user changed in a
// kubeconfig dnsplane wrote (kubectl config set-context --current
// --namespace, preferences) is kept: a restart updates only the server,
// the CA, the token and which cluster and user the context names.
func ensureKubeconfig(path, serverURL string, caPEM []byte, token string) error {
	cfg := clientcmdapi.NewConfig()
	if have, err := os.ReadFile(path); err == nil && notOurKubeconfig(have) == "" && len(bytes.TrimSpace(have)) > 0 {
		if loaded, err := clientcmd.Load(have); err == nil {
			cfg = loaded
		}
	}
	cluster := cfg.Clusters[kubeconfigEntry]
	if cluster == nil {
		cluster = clientcmdapi.NewCluster()
		cfg.Clusters[kubeconfigEntry] = cluster
	}
	cluster.Server, cluster.CertificateAuthorityData, cluster.CertificateAuthority = serverURL, caPEM, ""
	user := cfg.AuthInfos[kubeconfigEntry]
	if user == nil {
		user = clientcmdapi.NewAuthInfo()
		cfg.AuthInfos[kubeconfigEntry] = user
	}
	user.Token, user.TokenFile = token, ""
	ctx := cfg.Contexts[kubeconfigEntry]
	if ctx == nil {
		ctx = clientcmdapi.NewContext()
		cfg.Contexts[kubeconfigEntry] = ctx
	}
	ctx.Cluster, ctx.AuthInfo = kubeconfigEntry, kubeconfigEntry
	cfg.CurrentContext = kubeconfigEntry
	want, err := clientcmd.Write(*cfg)
	if err != nil {
		return fmt.Errorf("encode kubeconfig: %w", err)
	}
	// Comparing bytes is enough because clientcmd.Write is deterministic,
	// and it leaves an up-to-date file (and its mtime) alone.
	if have, err := os.ReadFile(path); err == nil && bytes.Equal(have, want) {
		return restrictMode(path)
	}
	return writeFileAtomic(path, want, 0o600)
}

// ForeignFileError is a file where dnsplane writes one of its own that holds
// something dnsplane did not write, such as someone's kubeconfig.
type ForeignFileError struct {
	Path string
	// Why says what gives it away.
	Why string
}

func (e *ForeignFileError) Error() string {
	return fmt.Sprintf("%s was not written by dnsplane (%s), and dnsplane does not overwrite it", e.Path, e.Why)
}

// CheckAdmin returns a *ForeignFileError when <dir>/kubeconfig exists and
// is not one EnsureAdmin wrote: one dnsplane wrote has only entries named
// "dnsplane". tokens.csv needs no check: EnsureAdmin keeps its other lines.
func CheckAdmin(dir string) error {
	path := filepath.Join(dir, kubeconfigName)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("pki: read kubeconfig: %w", err)
	}
	if why := notOurKubeconfig(data); why != "" {
		return &ForeignFileError{Path: path, Why: why}
	}
	return nil
}

// notOurKubeconfig says why data is not a kubeconfig ensureKubeconfig
// wrote, or "" when it is one (an empty file holds nothing to keep).
func notOurKubeconfig(data []byte) string {
	if len(bytes.TrimSpace(data)) == 0 {
		return ""
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return "it is not a kubeconfig"
	}
	if cfg.CurrentContext != "" && cfg.CurrentContext != kubeconfigEntry {
		return fmt.Sprintf("its current context is %q", cfg.CurrentContext)
	}
	for _, kind := range []struct {
		what  string
		names []string
	}{
		{"context", slices.Sorted(maps.Keys(cfg.Contexts))},
		{"cluster", slices.Sorted(maps.Keys(cfg.Clusters))},
		{"user", slices.Sorted(maps.Keys(cfg.AuthInfos))},
	} {
		for _, n := range kind.names {
			if n != kubeconfigEntry {
				return fmt.Sprintf("it has a %s named %q", kind.what, n)
			}
		}
	}
	return ""
}
