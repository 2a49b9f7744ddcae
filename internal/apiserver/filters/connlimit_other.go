//go:build !unix

package filters

import "errors"

// descriptorLimit is not known where there is no RLIMIT_NOFILE; the caller
// falls back to defaultMaxConnections.
func descriptorLimit() (uint64, error) {
	return 0, errors.New("no descriptor limit on this system")
}
