// Package corefile is a typed model of a CoreDNS Corefile and its one
// renderer. The cluster DNS and node cache generators build their Corefiles
// with it, and so will the DNS operator.
//
// The package imports only the standard library: rendering a Corefile must
// not link or initialise CoreDNS plugins (TestNoCoreDNSDependency keeps it
// that way). Loading and serving a Corefile is internal/coredns's job.
package corefile

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Corefile is a whole Corefile: server blocks in the order they are
// written.
type Corefile struct {
	Servers []Server
}

// Server is one server block.
type Server struct {
	// Zones are the block's keys as CoreDNS reads them:
	// [TRANSPORT://]ZONE[:PORT], e.g. ".:53" or "cluster.local:53".
	Zones []string
	// Plugins are the block's plugin lines. CoreDNS runs plugins in its
	// compiled-in directive order, not in this order; it is kept as given
	// so that the output is deterministic and reads as written.
	Plugins []Plugin
}

// Plugin is one plugin line in a server block, with an optional block of
// properties: `forward . 192.0.2.1 { force_tcp }`.
type Plugin struct {
	Name string
	Args []string
	// Block holds the lines between braces; when empty no braces are
	// written.
	Block []Directive
}

// Directive is one property line inside a plugin's block, such as
// `kubeconfig /path` in kubernetes or `code 65534` in searchexpand.
// CoreDNS plugins read one level of properties, so a Directive has no
// block of its own.
type Directive struct {
	Name string
	Args []string
}

// indent is the indentation per block level. Four spaces is what CoreDNS's
// own documentation and Kubernetes' default Corefile use.
const indent = "    "

// Render writes c as Corefile text: each server block's zones on its first
// line, one plugin per line indented by four spaces, property blocks by
// eight, and a blank line between server blocks. The same Corefile always
// renders to the same bytes, so a changed rendering means a changed
// configuration (the operator compares renderings, and CoreDNS reloads on
// any change).
//
// Every zone, name and argument must be one Corefile token: Render returns
// an error naming the first one that is not (see CheckToken) rather than
// quoting it, since a value that needs quoting in a generated Corefile is
// almost always a mistake, and CoreDNS's parser gives a quoted "{" or "}"
// its structural meaning anyway.
func (c Corefile) Render() (string, error) {
	var b strings.Builder
	for i, s := range c.Servers {
		if err := s.check(); err != nil {
			return "", fmt.Errorf("server block %d: %w", i+1, err)
		}
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(strings.Join(s.Zones, " "))
		b.WriteString(" {\n")
		for _, p := range s.Plugins {
			line(&b, indent, p.Name, p.Args)
			if len(p.Block) == 0 {
				b.WriteString("\n")
				continue
			}
			b.WriteString(" {\n")
			for _, d := range p.Block {
				line(&b, indent+indent, d.Name, d.Args)
				b.WriteString("\n")
			}
			b.WriteString(indent + "}\n")
		}
		b.WriteString("}\n")
	}
	return b.String(), nil
}

// line writes one directive line without its line end.
func line(b *strings.Builder, prefix, name string, args []string) {
	b.WriteString(prefix)
	b.WriteString(name)
	for _, a := range args {
		b.WriteString(" ")
		b.WriteString(a)
	}
}

// check validates every token of s, naming the one that fails.
func (s Server) check() error {
	if len(s.Zones) == 0 {
		return errors.New("no zones")
	}
	for _, z := range s.Zones {
		if err := CheckToken(z); err != nil {
			return fmt.Errorf("zone %w", err)
		}
	}
	for _, p := range s.Plugins {
		if err := checkDirective(p.Name, p.Args); err != nil {
			return err
		}
		for _, d := range p.Block {
			if err := checkDirective(d.Name, d.Args); err != nil {
				return fmt.Errorf("plugin %s: %w", p.Name, err)
			}
		}
	}
	return nil
}

func checkDirective(name string, args []string) error {
	if err := checkName(name); err != nil {
		return err
	}
	for _, a := range args {
		if err := CheckToken(a); err != nil {
			return fmt.Errorf("%s: argument %w", name, err)
		}
	}
	return nil
}

// checkName accepts plugin and property names as CoreDNS spells them:
// lower-case letters, digits, '_' and '-'. Anything else is a bug in the
// caller, not user input.
func checkName(name string) error {
	if name == "" {
		return errors.New("empty plugin or property name")
	}
	for _, r := range name {
		if !nameRune(r) {
			return fmt.Errorf("plugin or property name %q: want lower-case letters, digits, '_' or '-'", name)
		}
	}
	return nil
}

// TokenError is a value that cannot be written as one Corefile token.
type TokenError struct {
	Value string
}

func (e *TokenError) Error() string {
	if e.Value == "" {
		return `"" is empty, which is not a Corefile token`
	}
	return fmt.Sprintf("%q contains whitespace or a Corefile metacharacter", e.Value)
}

// CheckToken returns a *TokenError unless s can be written into a Corefile
// as exactly one token that means itself. Rejected are the empty string
// (it would vanish and shift the arguments after it), whitespace of any
// kind (CoreDNS's lexer splits on Unicode spaces), control characters and
// invalid UTF-8 (the lexer reads runes), braces (blocks, and {$ENV}
// substitution), '"' (quoting), '#' (comments) and ';' (kept out as it
// always was: it ends a line in many other configuration languages). A
// backslash outside quotes is an ordinary character to the lexer.
//
// Generators call it on user-supplied values first, so that the error
// names the option ("kubeconfig path %w").
func CheckToken(s string) error {
	if s == "" || !utf8.ValidString(s) {
		return &TokenError{Value: s}
	}
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || strings.ContainsRune(metachars, r) {
			return &TokenError{Value: s}
		}
	}
	return nil
}

// metachars are the printable characters CoreDNS's lexer and parser give a
// meaning of their own.
const metachars = "{}\"#;"

// nameRune reports whether r may appear in a plugin or property name.
func nameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}
