package pki

import (
	"fmt"
	"net"
	"slices"
	"strings"
)

// subjectAltNames is the set of names a serving certificate must cover.
type subjectAltNames struct {
	dnsNames []string
	ips      []net.IP
}

// parseHosts sorts hosts into DNS names and IP addresses, dropping blanks and
// duplicates and accepting bracketed IPv6 literals as they appear in URLs.
// The loopback names are always included so that the generated kubeconfig
// and local health checks work whatever address the server binds.
func parseHosts(hosts []string) (subjectAltNames, error) {
	var s subjectAltNames
	for _, h := range slices.Concat([]string{"localhost", "127.0.0.1", "::1"}, hosts) {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
			h = h[1 : len(h)-1]
		}
		if ip := net.ParseIP(h); ip != nil {
			if v4 := ip.To4(); v4 != nil {
				ip = v4
			}
			if !slices.ContainsFunc(s.ips, ip.Equal) {
				s.ips = append(s.ips, ip)
			}
			continue
		}
		name := strings.ToLower(strings.TrimSuffix(h, "."))
		if !validDNSName(name) {
			return subjectAltNames{}, fmt.Errorf("host %q is neither an IP address nor a DNS name", h)
		}
		if !slices.Contains(s.dnsNames, name) {
			s.dnsNames = append(s.dnsNames, name)
		}
	}
	return s, nil
}

// validDNSName accepts RFC 1123 host names, with an optional leading "*."
// wildcard label. It exists to turn a typo such as "host:6443" into an error
// at startup instead of a certificate that no client will accept.
func validDNSName(name string) bool {
	if name == "" || len(name) > 253 {
		return false
	}
	labels := strings.Split(name, ".")
	for i, l := range labels {
		if i == 0 && l == "*" && len(labels) > 1 {
			continue
		}
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, c := range []byte(l) {
			if !ldhByte(c) {
				return false
			}
		}
	}
	return true
}

// ldhByte reports whether c may appear in an RFC 1123 label as written here:
// a lowercase letter, a digit or '-'.
func ldhByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-'
}

// missingFrom reports the first requested name that cert does not list, or
// "" when all are covered.
func (s subjectAltNames) missingFrom(dnsNames []string, ips []net.IP) string {
	for _, d := range s.dnsNames {
		if !slices.ContainsFunc(dnsNames, func(x string) bool { return strings.EqualFold(x, d) }) {
			return d
		}
	}
	for _, ip := range s.ips {
		if !slices.ContainsFunc(ips, ip.Equal) {
			return ip.String()
		}
	}
	return ""
}
