package strictdecode

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// YAML tags this package interprets, in yaml.v3's short form.
const (
	tagNull      = "!!null"
	tagBool      = "!!bool"
	tagStr       = "!!str"
	tagInt       = "!!int"
	tagFloat     = "!!float"
	tagTimestamp = "!!timestamp"
	tagBinary    = "!!binary"
	tagMerge     = "!!merge"
)

type scalarKind uint8

const (
	kindString scalarKind = iota
	kindNull
	kindBool
	kindInt
	kindUint
	kindFloat
)

// scalar is a resolved YAML scalar.
type scalar struct {
	kind scalarKind
	str  string
	b    bool
	i    int64
	u    uint64
	f    float64
}

// resolveScalar applies the rules in the package documentation to a scalar
// node. The parser has already resolved the tag of every untagged scalar
// (quoted ones are !!str), so only the value needs parsing; an explicit tag
// is checked against what the value would resolve to, as yaml.v3 does.
func resolveScalar(n *yaml.Node) (scalar, error) {
	var tag string
	switch {
	case n.Style&yaml.TaggedStyle != 0:
		t, err := checkExplicitTag(n)
		if err != nil {
			return scalar{}, err
		}
		tag = t
	case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		tag = tagStr
	default:
		// Resolve plain scalars ourselves rather than trust the tag yaml.v3
		// assigned: its YAML 1.2 rules differ from upstream's on booleans.
		tag = implicitTag(n.Value, true)
	}
	v := n.Value
	switch tag {
	case tagNull:
		return scalar{kind: kindNull}, nil
	case tagBool:
		switch v {
		case "true", "True", "TRUE", "y", "Y", "yes", "Yes", "YES", "on", "On", "ON":
			return scalar{kind: kindBool, b: true}, nil
		case "false", "False", "FALSE", "n", "N", "no", "No", "NO", "off", "Off", "OFF":
			return scalar{kind: kindBool}, nil
		}
	case tagInt:
		if s, ok := parseInt(v); ok {
			return s, nil
		}
	case tagFloat:
		if s, ok := parseInt(v); ok {
			// !!float 1 (or an int-looking value tagged !!float).
			if s.kind == kindUint {
				return scalar{kind: kindFloat, f: float64(s.u)}, nil
			}
			return scalar{kind: kindFloat, f: float64(s.i)}, nil
		}
		if f, ok := parseFloat(v); ok {
			return scalar{kind: kindFloat, f: f}, nil
		}
	case tagBinary:
		data, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return scalar{}, fmt.Errorf("!!binary value contains invalid base64 data")
		}
		return scalar{kind: kindString, str: string(data)}, nil
	default:
		// !!str, !!timestamp (kept as written), !!merge used as a value,
		// and any other tag.
		return scalar{kind: kindString, str: v}, nil
	}
	return scalar{}, fmt.Errorf("cannot decode %q as %s", v, tag)
}

// checkExplicitTag returns the tag to use for a scalar with an explicit tag,
// or an error if the value cannot have that tag.
func checkExplicitTag(n *yaml.Node) (string, error) {
	tag := n.Tag
	switch tag {
	case tagNull, tagBool, tagInt, tagFloat, tagTimestamp:
	default:
		// !!str, !!binary and tags without a resolution rule take any value.
		return tag, nil
	}
	got := implicitTag(n.Value, tag == tagTimestamp)
	if got == tag || tag == tagFloat && got == tagInt {
		return tag, nil
	}
	return "", fmt.Errorf("cannot decode %s %q as %s", got, n.Value, tag)
}

// implicitTag resolves an untagged plain scalar the way yaml.v3 does, except
// for booleans: kubectl and kube-apiserver read YAML through sigs.k8s.io/yaml
// (YAML 1.1 rules), where `yes`, `on`, `y` and their negatives are booleans,
// so `paused: yes` must decode as it does upstream.
func implicitTag(v string, timestamps bool) string {
	switch v {
	case "", "~", "null", "Null", "NULL":
		return tagNull
	case "true", "True", "TRUE", "false", "False", "FALSE":
		return tagBool
	case "y", "Y", "yes", "Yes", "YES", "on", "On", "ON",
		"n", "N", "no", "No", "NO", "off", "Off", "OFF":
		return tagBool
	case ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF":
		return tagFloat
	case "<<":
		return tagMerge
	}
	switch c := v[0]; {
	case c == '.':
		if _, err := strconv.ParseFloat(v, 64); err == nil {
			return tagFloat
		}
	case c >= '0' && c <= '9' || c == '+' || c == '-':
		if timestamps && isTimestamp(v) {
			return tagTimestamp
		}
		if _, ok := parseInt(v); ok {
			return tagInt
		}
		if _, ok := parseFloat(v); ok {
			return tagFloat
		}
	}
	return tagStr
}

// parseInt parses a YAML integer: '_' separators are ignored, Go's base
// prefixes (0x, 0o, 0b, and a leading 0 for octal) are accepted, and a
// 0b/0o prefix may be followed by a signed number, as in yaml.v3.
func parseInt(v string) (scalar, bool) {
	if v == "" {
		return scalar{}, false
	}
	if c := v[0]; c != '+' && c != '-' && (c < '0' || c > '9') {
		return scalar{}, false
	}
	plain := strings.ReplaceAll(v, "_", "")
	if i, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return scalar{kind: kindInt, i: i}, true
	}
	if u, err := strconv.ParseUint(plain, 0, 64); err == nil {
		return scalar{kind: kindUint, u: u}, true
	}
	var digits, neg string
	var base int
	switch {
	case strings.HasPrefix(plain, "0b"):
		digits, base = plain[2:], 2
	case strings.HasPrefix(plain, "-0b"):
		digits, base, neg = plain[3:], 2, "-"
	case strings.HasPrefix(plain, "0o"):
		digits, base = plain[2:], 8
	case strings.HasPrefix(plain, "-0o"):
		digits, base, neg = plain[3:], 8, "-"
	default:
		return scalar{}, false
	}
	if i, err := strconv.ParseInt(neg+digits, base, 64); err == nil {
		return scalar{kind: kindInt, i: i}, true
	}
	if neg == "" {
		if u, err := strconv.ParseUint(digits, base, 64); err == nil {
			return scalar{kind: kindUint, u: u}, true
		}
	}
	return scalar{}, false
}

// parseFloat parses a YAML float: the special values, a number starting
// with '.', or (after dropping '_') a decimal number with optional
// fraction and exponent.
func parseFloat(v string) (float64, bool) {
	switch v {
	case ".nan", ".NaN", ".NAN":
		return math.NaN(), true
	case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF":
		return math.Inf(1), true
	case "-.inf", "-.Inf", "-.INF":
		return math.Inf(-1), true
	}
	if v == "" {
		return 0, false
	}
	if v[0] == '.' {
		f, err := strconv.ParseFloat(v, 64)
		return f, err == nil
	}
	plain := strings.ReplaceAll(v, "_", "")
	if !isYAMLFloat(plain) {
		return 0, false
	}
	f, err := strconv.ParseFloat(plain, 64)
	return f, err == nil
}

// isYAMLFloat matches [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
// without a regular expression.
func isYAMLFloat(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := func() int {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - start
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	} else {
		if digits() == 0 {
			return false
		}
		if i < len(s) && s[i] == '.' {
			i++
			digits()
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// Layouts an unquoted timestamp may have, the subset of
// https://yaml.org/type/timestamp.html that yaml.v3 recognises.
var timestampLayouts = [...]string{
	"2006-1-2T15:4:5.999999999Z07:00",
	"2006-1-2t15:4:5.999999999Z07:00",
	"2006-1-2 15:4:5.999999999",
	"2006-1-2",
}

func isTimestamp(s string) bool {
	// Every layout starts with a four-digit year and '-'.
	if len(s) < 5 || s[4] != '-' {
		return false
	}
	for i := 0; i < 4; i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	for _, layout := range timestampLayouts {
		if _, err := time.Parse(layout, s); err == nil {
			return true
		}
	}
	return false
}

// appendJSONFloat formats f as encoding/json formats a float64 (the shortest
// text that round-trips, exponent form only for very small or large
// magnitudes), which is what upstream's YAML to JSON conversion produces.
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// Go writes e-07; JSON encoders conventionally write e-7.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// keyString is a scalar's text as a JSON object key, as sigs.k8s.io/yaml
// converts non-string keys.
func keyString(s scalar) (string, bool) {
	switch s.kind {
	case kindString:
		return s.str, true
	case kindBool:
		return strconv.FormatBool(s.b), true
	case kindInt:
		return strconv.FormatInt(s.i, 10), true
	case kindUint:
		return strconv.FormatUint(s.u, 10), true
	case kindFloat:
		switch {
		case math.IsInf(s.f, 1):
			return ".inf", true
		case math.IsInf(s.f, -1):
			return "-.inf", true
		case math.IsNaN(s.f):
			return ".nan", true
		}
		return strconv.FormatFloat(s.f, 'g', -1, 32), true
	}
	return "", false
}

const hexDigits = "0123456789abcdef"

// appendJSONString writes s as a JSON string. Invalid UTF-8 (possible only
// from !!binary) becomes U+FFFD, as encoding/json does.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
