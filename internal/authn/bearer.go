package authn

import "strings"

// bearerToken extracts the token from an Authorization header value the way
// kube-apiserver's bearertoken authenticator does: the value is trimmed, split
// on single spaces into at most three parts, the scheme is compared
// case-insensitively, and the token is the second part. Anything after a
// further space is ignored, and a doubled space yields an empty token, which
// counts as no token at all. Matching these quirks keeps a header that works
// (or fails) against a real cluster behaving the same here.
func bearerToken(header string) (string, bool) {
	header = strings.TrimSpace(header)
	if header == "" {
		return "", false
	}
	parts := strings.SplitN(header, " ", 3)
	if len(parts) < 2 || strings.ToLower(parts[0]) != "bearer" {
		return "", false
	}
	if parts[1] == "" {
		return "", false
	}
	return parts[1], true
}
