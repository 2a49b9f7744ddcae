package resolvconf

import (
	"io"

	"github.com/dnsplane/dnsplane/plugin/pkg/hostresolv"
)

// MaxFileSize is kubelet's limit on the host resolv.conf: 10 MiB.
const MaxFileSize = hostresolv.MaxFileSize

// Parse reads a host resolv.conf with kubelet's rules (see hostresolv.Parse,
// which owns them so the node cache plugin can read the same file without
// linking this package).
func Parse(r io.Reader) (Config, error) {
	c, err := hostresolv.Parse(r)
	return Config(c), err
}

// ParseFile is Parse on the file at path; errors name the path.
func ParseFile(path string) (Config, error) {
	c, err := hostresolv.ParseFile(path)
	return Config(c), err
}
