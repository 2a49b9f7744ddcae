package dnsspec

import (
	"net"
	"net/netip"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// nameServerForm is what a nameserver entry may look like, for messages.
const nameServerForm = "must be an IP address with an optional port: IPv4, IPv4:PORT, IPv6 or [IPv6]:PORT"

// ParseNameServer parses a forward plugin's nameserver entry: IPv4,
// IPv4:PORT, IPv6 or [IPv6]:PORT, the addresses in Kubernetes' strict IP
// form (no leading zeros, no IPv4-mapped IPv6, IPv6 in RFC 5952 canonical
// form), the port 1 to 65535. port is 0 when the entry has none. The
// error, with path and the whole entry, is in Kubernetes' wording.
func ParseNameServer(path *field.Path, s string) (addr netip.Addr, port uint16, err *field.Error) {
	if s == "" {
		return netip.Addr{}, 0, field.Required(path, "")
	}
	host, portText, hasPort := s, "", false
	if h, p, splitErr := net.SplitHostPort(s); splitErr == nil {
		host, portText, hasPort = h, p, true
	}
	if hasPort {
		// SplitHostPort also accepts "[192.0.2.1]:53" and "2001:db8::1"
		// never reaches here: brackets exactly when the address is IPv6.
		if bracketed := strings.HasPrefix(s, "["); bracketed != strings.Contains(host, ":") {
			return netip.Addr{}, 0, field.Invalid(path, s, nameServerForm)
		}
	}
	if errs := validation.IsValidIP(path, host); len(errs) > 0 {
		// Kubernetes' own detail for something made of address
		// characters ("must not have leading 0s", "must be in canonical
		// form …"), the accepted forms for anything else (a host name, a
		// bracketed address without a port).
		detail := errs[0].Detail
		if strings.Trim(host, "0123456789abcdefABCDEF.:") != "" {
			detail = nameServerForm
		}
		return netip.Addr{}, 0, field.Invalid(path, s, detail)
	}
	addr = netip.MustParseAddr(host) // IsValidIP accepted it
	if !hasPort {
		return addr, 0, nil
	}
	n, convErr := strconv.Atoi(portText)
	if convErr != nil || len(validation.IsValidPortNum(n)) > 0 {
		return netip.Addr{}, 0, field.Invalid(path, s, "port "+validation.InclusiveRangeError(1, 65535))
	}
	return addr, uint16(n), nil
}

// endpoint is a nameserver's identity for duplicate checks: two entries
// that reach the same address and port are the same nameserver, whether
// or not they spell the default port.
func endpoint(addr netip.Addr, port uint16, tls bool) string {
	if port == 0 {
		port = DNSPort
		if tls {
			port = DNSTLSPort
		}
	}
	return netip.AddrPortFrom(addr, port).String()
}
