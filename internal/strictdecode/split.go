package strictdecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

const (
	// MaxDocumentSize is the largest document accepted, in bytes: the
	// request body limit of kube-apiserver (3 MiB).
	MaxDocumentSize = 3 << 20
	// MaxDepth is the deepest nesting of objects and arrays accepted.
	MaxDepth = 1000
)

// Detect guesses the format of an input: JSON if the first byte that is not
// whitespace is '{' or '[', YAML otherwise.
func Detect(data []byte) Format {
	for _, c := range data {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{', '[':
			return JSON
		}
		return YAML
	}
	return YAML
}

// Split parses every document of an input, detecting its format. Input that
// looks like JSON but is not valid JSON is tried as YAML (JSON-looking YAML
// such as `{a: 1}` is common, and kubectl falls back the same way); if that
// fails too, the JSON error is returned.
func Split(data []byte) ([]*Document, error) {
	if Detect(data) == YAML {
		return SplitFormat(data, YAML)
	}
	docs, err := SplitFormat(data, JSON)
	var se *jsonSyntaxError
	if err != nil && errors.As(err, &se) {
		if ydocs, yerr := SplitFormat(data, YAML); yerr == nil {
			return ydocs, nil
		}
	}
	return docs, err
}

// SplitFormat parses every document of an input in the given format: a
// YAML stream of `---`-separated documents, or one or more concatenated
// JSON values. Empty documents are skipped. Errors are *InputError values
// naming the position.
func SplitFormat(data []byte, format Format) ([]*Document, error) {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return nil, &InputError{Pos: posAt(data, i), Err: errors.New("binary data: the input contains a NUL byte")}
	}
	switch format {
	case JSON:
		return splitJSON(data)
	case YAML:
		return splitYAML(data)
	}
	return nil, fmt.Errorf("unknown format %v", format)
}

// jsonSyntaxError marks input that is not JSON, as opposed to JSON over a
// limit, so that Split knows when trying YAML makes sense.
type jsonSyntaxError struct{ err error }

func (e *jsonSyntaxError) Error() string { return "invalid JSON: " + e.err.Error() }
func (e *jsonSyntaxError) Unwrap() error { return e.err }

func splitJSON(data []byte) ([]*Document, error) {
	// The common case, one value (a request body, a single-object file), is
	// checked with one scan; the Decoder, which scans each value three
	// times, is only used for streams of several values and for errors.
	if json.Valid(data) {
		start := len(data) - len(bytes.TrimLeft(data, " \t\r\n"))
		value := bytes.TrimRight(data[start:], " \t\r\n")
		return jsonDocuments(nil, value, posAt(data, start), true)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	cur := newCursor(data)
	var docs []*Document
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, jsonSplitError(data, err)
		}
		end := int(dec.InputOffset())
		start := end - len(raw)
		if start < 0 || end > len(data) {
			return nil, fmt.Errorf("JSON decoder reported offset %d outside the input", end)
		}
		if docs, err = jsonDocuments(docs, raw, cur.pos(start), false); err != nil {
			return nil, err
		}
	}
}

// jsonDocuments checks one JSON value against the limits and appends it to
// docs unless it is null. Documents never alias the caller's input: raw is
// copied if it is part of it (clone), after the limits are checked.
func jsonDocuments(docs []*Document, raw []byte, pos Position, clone bool) ([]*Document, error) {
	if len(raw) > MaxDocumentSize {
		return nil, &InputError{Pos: pos, Err: sizeError(len(docs), len(raw))}
	}
	if err := jsonDepthError(raw); err != nil {
		var de *depthError
		if errors.As(err, &de) {
			pos = (&lineIndex{text: raw, base: pos}).pos(de.off)
		}
		return nil, &InputError{Pos: pos, Err: fmt.Errorf("document %d: %w", len(docs), err)}
	}
	if string(raw) == "null" {
		return docs, nil
	}
	if clone {
		raw = bytes.Clone(raw)
	}
	return append(docs, &Document{
		index:  len(docs),
		format: JSON,
		start:  pos,
		json:   raw,
		posOf:  (&lineIndex{text: raw, base: pos}).pos,
	}), nil
}

func jsonSplitError(data []byte, err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		off := int(se.Offset) - 1 // Offset counts the offending byte
		if off < 0 {
			off = 0
		}
		return &InputError{Pos: posAt(data, off), Err: &jsonSyntaxError{err}}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &InputError{Pos: posAt(data, len(data)), Err: &jsonSyntaxError{errors.New("unexpected end of input")}}
	}
	return &InputError{Err: fmt.Errorf("reading JSON: %w", err)}
}

func sizeError(index, size int) error {
	return fmt.Errorf("document %d is %d bytes, larger than the limit of %d bytes", index, size, MaxDocumentSize)
}
