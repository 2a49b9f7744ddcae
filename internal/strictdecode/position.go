package strictdecode

import (
	"bytes"
	"sort"
	"sync"
	"unicode/utf8"
)

// cursor turns increasing byte offsets of one input into positions, counting
// each byte once however many offsets are asked for. Split uses it for
// document starts and errors.
type cursor struct {
	data      []byte
	off       int
	line, col int
}

func newCursor(data []byte) *cursor { return &cursor{data: data, line: 1, col: 1} }

// pos returns the position of byte offset off. Offsets below the last one
// asked for start counting again from the beginning.
func (c *cursor) pos(off int) Position {
	if off > len(c.data) {
		off = len(c.data)
	}
	if off < c.off {
		c.off, c.line, c.col = 0, 1, 1
	}
	chunk := c.data[c.off:off]
	if n := bytes.Count(chunk, newline); n > 0 {
		c.line += n
		last := bytes.LastIndexByte(chunk, '\n')
		c.col = 1 + utf8.RuneCount(chunk[last+1:])
	} else {
		c.col += utf8.RuneCount(chunk)
	}
	c.off = off
	return Position{Line: c.line, Column: c.col}
}

var newline = []byte{'\n'}

// posAt is the position of byte offset off in data.
func posAt(data []byte, off int) Position { return newCursor(data).pos(off) }

// lineIndex finds positions of arbitrary offsets in the text of one JSON
// document that starts at base in its input. The table of line starts is
// built on first use: positions are only needed on the error path.
type lineIndex struct {
	text []byte
	base Position

	once sync.Once
	nl   []int // offsets of '\n' in text
}

func (l *lineIndex) pos(off int) Position {
	l.once.Do(func() {
		for i := 0; ; {
			j := bytes.IndexByte(l.text[i:], '\n')
			if j < 0 {
				break
			}
			l.nl = append(l.nl, i+j)
			i += j + 1
		}
	})
	if off < 0 || off > len(l.text) {
		return Position{}
	}
	k := sort.SearchInts(l.nl, off) // newlines before off
	if k == 0 {
		return Position{Line: l.base.Line, Column: l.base.Column + utf8.RuneCount(l.text[:off])}
	}
	start := l.nl[k-1] + 1
	return Position{Line: l.base.Line + k, Column: 1 + utf8.RuneCount(l.text[start:off])}
}

// mark says that the JSON written at byte off came from the YAML node at
// line:col. The YAML converter writes one for every mapping key and
// sequence item, in increasing offset order.
type mark struct{ off, line, col int32 }

type marks []mark

func (m marks) pos(off int) Position {
	i := sort.Search(len(m), func(i int) bool { return int(m[i].off) >= off })
	if i < len(m) && int(m[i].off) == off {
		return Position{Line: int(m[i].line), Column: int(m[i].col)}
	}
	return Position{}
}
