package strictdecode

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// yamlChunk is the text between two document markers of a YAML stream.
type yamlChunk struct {
	line int // first line, 1-based
	size int // bytes
}

// yamlChunks splits a YAML stream at its document markers (`---` or `...`
// at the start of a line, followed by a blank or the end of the line), the
// same boundaries the parser uses: a marker there ends any document, even
// inside a block or quoted scalar. It is one cheap pass so that an oversized
// document is rejected before the parser spends time and memory on it.
func yamlChunks(data []byte) []yamlChunk {
	chunks := []yamlChunk{{line: 1}}
	start := 0
	for off, line := 0, 1; off < len(data); line++ {
		if isDocMarker(data[off:]) {
			chunks[len(chunks)-1].size = off - start
			chunks = append(chunks, yamlChunk{line: line})
			start = off
		}
		nl := bytes.IndexByte(data[off:], '\n')
		if nl < 0 {
			break
		}
		off += nl + 1
	}
	chunks[len(chunks)-1].size = len(data) - start
	return chunks
}

func isDocMarker(b []byte) bool {
	if !bytes.HasPrefix(b, []byte("---")) && !bytes.HasPrefix(b, []byte("...")) {
		return false
	}
	if len(b) == 3 {
		return true
	}
	switch b[3] {
	case ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

// chunkAt returns the chunk that holds line.
func chunkAt(chunks []yamlChunk, line int) yamlChunk {
	i := sort.Search(len(chunks), func(i int) bool { return chunks[i].line > line })
	if i == 0 {
		return chunks[0]
	}
	return chunks[i-1]
}

func splitYAML(data []byte) ([]*Document, error) {
	chunks := yamlChunks(data)
	for i, ch := range chunks {
		if ch.size > MaxDocumentSize {
			return nil, &InputError{Pos: Position{Line: ch.line}, Err: fmt.Errorf("YAML %w", sizeError(i, ch.size))}
		}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*Document
	for {
		var node yaml.Node
		err := decodeNode(dec, &node)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, yamlSyntaxError(data, err)
		}
		if node.Kind != yaml.DocumentNode || len(node.Content) != 1 {
			return nil, &InputError{Pos: Position{Line: node.Line, Column: node.Column}, Err: errors.New("invalid YAML: unexpected document structure")}
		}
		root := node.Content[0]
		if root.Kind == yaml.ScalarNode && root.Tag == tagNull {
			continue // only comments, `---`, or null: nothing to decode
		}
		js, mk, err := convertYAML(root, chunkAt(chunks, root.Line).size)
		if err != nil {
			var ie *InputError
			if errors.As(err, &ie) {
				return nil, &InputError{Pos: ie.Pos, Err: fmt.Errorf("document %d: %w", len(docs), ie.Err)}
			}
			return nil, fmt.Errorf("document %d: %w", len(docs), err)
		}
		docs = append(docs, &Document{
			index:  len(docs),
			format: YAML,
			start:  Position{Line: root.Line, Column: root.Column},
			json:   js,
			posOf:  mk.pos,
		})
	}
}

// decodeNode parses the next document. yaml.v3 reports bad input by
// panicking internally and recovering its own panics; anything else it
// panics with is turned into an error here, because the input is untrusted.
func decodeNode(dec *yaml.Decoder, node *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: parser failed: %v", r)
		}
	}()
	return dec.Decode(node)
}

// yamlSyntaxError turns a yaml.v3 error into an InputError with a position.
// yaml.v3 writes the line into the message ("yaml: line 3: did not find
// expected key"); that line is kept as reported, so it matches what other
// Kubernetes tools print (for parser errors it is the line of the construct
// being parsed, which may be a line before the fault). yaml.v3 leaves the
// line out when it is the first one, and for errors of its input reader
// and unknown anchors; those positions are found here.
func yamlSyntaxError(data []byte, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	var pos Position
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if i := strings.IndexByte(rest, ':'); i > 0 {
			if n, convErr := strconv.Atoi(rest[:i]); convErr == nil && n > 0 {
				pos.Line = n
				msg = strings.TrimSpace(rest[i+1:])
			}
		}
	}
	if pos.IsZero() {
		pos = findYAMLErrorPosition(data, msg)
	}
	return &InputError{Pos: pos, Err: errors.New("invalid YAML: " + msg)}
}

func findYAMLErrorPosition(data []byte, msg string) Position {
	switch {
	case strings.Contains(msg, "UTF-8") || strings.Contains(msg, "control characters") || strings.Contains(msg, "Unicode character"):
		if off := firstNonYAMLChar(data); off >= 0 {
			return posAt(data, off)
		}
		return Position{}
	case strings.HasPrefix(msg, "unknown anchor '"):
		name := strings.TrimSuffix(strings.TrimPrefix(msg, "unknown anchor '"), "' referenced")
		if off := bytes.Index(data, []byte("*"+name)); off >= 0 {
			return posAt(data, off)
		}
		return Position{}
	case strings.HasPrefix(msg, "parser failed"):
		return Position{}
	}
	// Scanner and parser errors always have a mark; yaml.v3 omits the line
	// only when the mark is on the first line.
	return Position{Line: 1}
}

// firstNonYAMLChar is the offset of the first byte that is not valid UTF-8
// or is a character YAML does not allow in a stream, or -1.
func firstNonYAMLChar(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		switch {
		case r == '\t' || r == '\n' || r == '\r' || r >= 0x20 && r <= 0x7e || r == 0x85,
			r >= 0xa0 && r <= 0xd7ff, r >= 0xe000 && r <= 0xfffd, r >= 0x10000 && r <= 0x10ffff:
		default:
			return i
		}
		i += size
	}
	return -1
}
