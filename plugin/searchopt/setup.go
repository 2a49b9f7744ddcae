package searchopt

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/dnsplane/dnsplane/plugin/pkg/searchpath"
)

// defaultResolvConf is where the host search list is read from when neither
// host_search nor resolv_conf is given (a variable so tests can point it
// elsewhere).
var defaultResolvConf = "/etc/resolv.conf"

const (
	defaultClusterDomain = "cluster.local"
	// The EDNS0 local/experimental option code range.
	minCode = 65001
	maxCode = 65534
)

func init() { plugin.Register(pluginName, setup) }

func setup(c *caddy.Controller) error {
	s, err := parse(c)
	if err != nil {
		return plugin.Error(pluginName, err)
	}
	dnsserver.GetConfig(c).AddPlugin(func(next plugin.Handler) plugin.Handler {
		s.Next = next
		return s
	})
	return nil
}

func parse(c *caddy.Controller) (*SearchOpt, error) {
	s := &SearchOpt{ClusterDomain: defaultClusterDomain, Code: searchpath.DefaultOptionCode}
	seen := false
	for c.Next() {
		if seen {
			return nil, errors.New("specified more than once")
		}
		seen = true

		args := c.RemainingArgs()
		switch len(args) {
		case 0:
		case 1:
			cd, err := domain(args[0])
			if err != nil {
				return nil, fmt.Errorf("cluster domain: %w", err)
			}
			s.ClusterDomain = cd
		default:
			return nil, c.ArgErr()
		}

		var hostSearch []string
		hostSearchSet := false
		resolvConf, resolvConfSet := defaultResolvConf, false
		for c.NextBlock() {
			switch c.Val() {
			case "code":
				args := c.RemainingArgs()
				if len(args) != 1 {
					return nil, c.ArgErr()
				}
				code, err := strconv.ParseUint(args[0], 10, 16)
				if err != nil || code < minCode || code > maxCode {
					return nil, fmt.Errorf("code %q: want an EDNS0 local option code, %d-%d", args[0], minCode, maxCode)
				}
				s.Code = uint16(code)
			case "host_search":
				args := c.RemainingArgs()
				if len(args) == 0 {
					return nil, c.ArgErr()
				}
				for _, a := range args {
					d, err := domain(a)
					if err != nil {
						return nil, fmt.Errorf("host_search: %w", err)
					}
					hostSearch = append(hostSearch, d)
				}
				hostSearchSet = true
			case "resolv_conf":
				args := c.RemainingArgs()
				if len(args) != 1 {
					return nil, c.ArgErr()
				}
				resolvConf, resolvConfSet = args[0], true
			default:
				return nil, c.Errf("unknown property %q", c.Val())
			}
		}

		if !hostSearchSet {
			list, err := readSearch(resolvConf)
			// The default file may be absent (e.g. in a minimal container):
			// then there is no host search list. A named file must exist.
			if err != nil && (resolvConfSet || !errors.Is(err, fs.ErrNotExist)) {
				return nil, fmt.Errorf("resolv_conf: %w", err)
			}
			hostSearch = list
		}
		s.HostSearch = hostSearch
	}
	return s, nil
}

// domain normalises and checks one search domain: lower case, no trailing
// dot, and acceptable in the option value.
func domain(s string) (string, error) {
	d := strings.ToLower(strings.TrimSuffix(s, "."))
	if _, err := searchpath.Encode([]string{d}); err != nil {
		return "", fmt.Errorf("%q: %w", s, err)
	}
	return d, nil
}

// readSearch returns the search list of a resolv.conf file by the kubelet's
// rules: the last search line wins, trailing dots are trimmed and "." is
// dropped. Entries that could not travel in the option are skipped.
func readSearch(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()

	var last []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || fields[0] != "search" {
			continue
		}
		last = nil
		for _, d := range fields[1:] {
			if d == "." {
				continue
			}
			if d, err := domain(d); err == nil {
				last = append(last, d)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return last, nil
}
