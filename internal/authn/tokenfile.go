package authn

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
)

// errInvalidBearer is what kube-apiserver reports when a bearer token was
// sent but no token authenticator knows it: the request carried credentials,
// so it must fail instead of falling through as anonymous.
var errInvalidBearer = errors.New("invalid bearer token")

// TokenFile authenticates static bearer tokens read from a file in the format
// of kube-apiserver's --token-auth-file.
type TokenFile struct {
	// Keyed by the token's SHA-256 so that the map lookup, whose timing
	// depends on the key, leaks nothing about the token itself; the final
	// comparison against the stored token is constant-time.
	tokens   map[[sha256.Size]byte]tokenEntry
	warnings []string
}

type tokenEntry struct {
	token []byte
	user  User
}

// LoadTokenFile reads a token file from path; see ParseTokenFile for the
// format.
func LoadTokenFile(path string) (*TokenFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open token file: %w", err)
	}
	defer f.Close()
	return parseTokenFile(f, "token file "+path)
}

// ParseTokenFile reads records of the form token,user,uid[,"group1,group2"]
// with kube-apiserver's rules: standard CSV quoting, blank lines skipped, no
// comment syntax (a line starting with # is an ordinary record), columns past
// the fourth ignored. A record with fewer than three columns fails the whole
// file, as in kube. Records with an empty token are skipped and a repeated
// token replaces the earlier one; both produce a warning (see Warnings), as
// kube logs them.
func ParseTokenFile(r io.Reader) (*TokenFile, error) {
	return parseTokenFile(r, "token file")
}

func parseTokenFile(r io.Reader, name string) (*TokenFile, error) {
	reader := csv.NewReader(r)
	// kube reads with a variable number of fields per record; the column
	// count is checked below so the error can say what the columns mean.
	reader.FieldsPerRecord = -1
	reader.ReuseRecord = true

	t := &TokenFile{tokens: make(map[[sha256.Size]byte]tokenEntry)}
	firstLine := make(map[[sha256.Size]byte]int)
	for {
		record, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		line, _ := reader.FieldPos(0)
		if len(record) < 3 {
			return nil, fmt.Errorf("%s line %d: must have at least 3 columns (token, user name, user uid), found %d", name, line, len(record))
		}
		if record[0] == "" {
			t.warnings = append(t.warnings, fmt.Sprintf("%s line %d: empty token, record ignored", name, line))
			continue
		}
		key := sha256.Sum256([]byte(record[0]))
		if prev, dup := firstLine[key]; dup {
			t.warnings = append(t.warnings, fmt.Sprintf("%s line %d: duplicate of the token on line %d, the later record wins", name, line, prev))
		} else {
			firstLine[key] = line
		}
		u := User{Name: record[1], UID: record[2]}
		if len(record) >= 4 {
			u.Groups = splitGroups(record[3])
		}
		t.tokens[key] = tokenEntry{token: []byte(record[0]), user: u}
	}
	return t, nil
}

// splitGroups splits the groups column on commas without trimming, as kube
// does, but drops empty names: kube would turn an empty column or a stray
// comma into a group named "", which no RBAC binding can name.
func splitGroups(s string) []string {
	var groups []string
	for g := range strings.SplitSeq(s, ",") {
		if g != "" {
			groups = append(groups, g)
		}
	}
	return groups
}

// Warnings lists the records that were ignored or replaced while parsing,
// for the caller to log.
func (t *TokenFile) Warnings() []string {
	return slices.Clone(t.warnings)
}

// Authenticate accepts "Authorization: Bearer <token>". A bearer token that is
// not in the file is an error rather than "no credentials", so a mistyped
// token gets 401 even on paths open to anonymous users, as in kube.
func (t *TokenFile) Authenticate(r *http.Request) (User, bool, error) {
	token, ok := bearerToken(r.Header.Get("Authorization"))
	if !ok {
		return User{}, false, nil
	}
	if u, ok := t.lookup(token); ok {
		return u, true, nil
	}
	return User{}, false, errInvalidBearer
}

func (t *TokenFile) lookup(token string) (User, bool) {
	e, ok := t.tokens[sha256.Sum256([]byte(token))]
	if !ok || subtle.ConstantTimeCompare(e.token, []byte(token)) != 1 {
		return User{}, false
	}
	u := e.user
	u.Groups = slices.Clone(u.Groups)
	return u, true
}
