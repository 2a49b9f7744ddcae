package hostresolv

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"
)

// MaxFileSize is kubelet's limit on the host resolv.conf: 10 MiB.
const MaxFileSize = 10 << 20

// Parse reads a host resolv.conf with kubelet's rules, so that pods see the
// same host search list and nameservers they would under kubelet:
// nameservers accumulate, the last search line wins (one trailing dot
// trimmed, a bare "." dropped), options lines merge by name, and other
// keywords are ignored. Unlike kubelet it refuses binary input, which is a
// misconfigured --resolv-conf rather than a resolver file.
//
// On error the returned Config is zero; every error names its line.
func Parse(r io.Reader) (Config, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return Config{}, fmt.Errorf("reading resolv.conf: %w", err)
	}
	if len(data) > MaxFileSize {
		return Config{}, fmt.Errorf("resolv.conf is larger than the %d-byte (10 MiB) limit", MaxFileSize)
	}
	return parse(data)
}

// ParseFile is Parse on the file at path.
func ParseFile(path string) (Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return Config{}, fmt.Errorf("reading host resolv.conf: %w", err)
	}
	defer f.Close()
	c, err := Parse(f)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

func parse(data []byte) (Config, error) {
	var (
		c    Config
		opts OptionSet
		errs lineErrors
		n    int
	)
	for raw := range bytes.Lines(data) {
		n++
		if err := checkText(raw); err != nil {
			return Config{}, fmt.Errorf("line %d: %w", n, err)
		}
		line := strings.TrimSpace(string(raw))
		if line == "" || line[0] == '#' {
			continue
		}
		fields := strings.Fields(line)
		switch fields[0] {
		case "nameserver":
			if len(fields) < 2 {
				// kubelet fails the pod sandbox here rather than guessing.
				errs = append(errs, fmt.Errorf("line %d: nameserver list is empty: %q needs an address", n, "nameserver"))
				continue
			}
			c.Nameservers = append(c.Nameservers, fields[1])
		case "search":
			c.Searches = parseSearch(fields[1:])
		case "options":
			for _, o := range fields[1:] {
				opts.Set(OptionName(o), o)
			}
		}
	}
	if len(errs) > 0 {
		return Config{}, errs
	}
	c.Options = opts.List()
	return c, nil
}

// parseSearch normalises one search line: trimming a trailing dot stops the
// same domain counting twice against the search limits, and a bare "."
// (systemd-resolved's "no search") must not reach pods, where musl rejects it.
func parseSearch(entries []string) []string {
	var out []string
	for _, s := range entries {
		if s == "." {
			continue
		}
		out = append(out, strings.TrimSuffix(s, "."))
	}
	return out
}

func checkText(line []byte) error {
	if i := bytes.IndexByte(line, 0); i >= 0 {
		return fmt.Errorf("not a text file: NUL byte at column %d", i+1)
	}
	if !utf8.Valid(line) {
		return errors.New("not a text file: invalid UTF-8")
	}
	return nil
}

// lineErrors reports every bad line at once, as kubelet aggregates them, so
// an operator fixes the file in one pass.
type lineErrors []error

func (e lineErrors) Error() string {
	s := make([]string, len(e))
	for i, err := range e {
		s[i] = err.Error()
	}
	return strings.Join(s, "; ")
}

func (e lineErrors) Unwrap() []error { return e }
