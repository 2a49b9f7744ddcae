package strictdecode

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// yamlConverter writes one YAML document's node tree as JSON in a single
// walk, recording where each key and item came from. Keys are written in
// document order and duplicates are kept, so that sigs.k8s.io/json sees and
// reports them.
type yamlConverter struct {
	out   []byte
	marks marks

	// segs is the field path of the node being written, for messages.
	segs []pathSeg
	// anchored holds the anchored nodes being written, so that an alias to
	// one of them (a cycle) is an error, not a hang. A set, because a
	// crafted input can hold many aliases inside deeply nested anchors.
	anchored map[*yaml.Node]struct{}

	// Alias expansion accounting: while aliasDepth > 0 every node visited
	// and every byte written comes from an alias.
	aliasDepth int
	aliasStart int // len(out) when the outermost expansion began
	aliasBytes int // bytes written by finished outermost expansions
	aliasWork  int // nodes visited inside expansions
}

type pathSeg struct {
	key   string
	index int // -1 for a key
}

// errAliasLimit is reported when aliases expand beyond MaxDocumentSize.
var errAliasLimit = fmt.Errorf("YAML aliases expand to more than %d bytes (MaxDocumentSize)", MaxDocumentSize)

// convertYAML converts the root node of a document.
func convertYAML(root *yaml.Node, sizeHint int) ([]byte, marks, error) {
	c := &yamlConverter{
		// JSON is usually a little larger than the YAML it came from.
		out: make([]byte, 0, sizeHint+sizeHint/4+16),
	}
	if err := c.value(root, 1); err != nil {
		return nil, nil, err
	}
	return c.out, c.marks, nil
}

// fail builds an error naming the node's position and the current path.
func (c *yamlConverter) fail(n *yaml.Node, err error) error {
	var p Position
	if n != nil {
		p = Position{Line: n.Line, Column: n.Column}
	}
	return &InputError{Pos: p, Err: fmt.Errorf("at %s: %w", displayPath(c.path()), err)}
}

func (c *yamlConverter) path() string {
	var b strings.Builder
	for i, s := range c.segs {
		if s.index >= 0 {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.key)
	}
	return b.String()
}

func (c *yamlConverter) mark(n *yaml.Node) {
	c.marks = append(c.marks, mark{off: int32(len(c.out)), line: int32(n.Line), col: int32(n.Column)})
}

// value writes node n. depth is the nesting level a container here has.
func (c *yamlConverter) value(n *yaml.Node, depth int) error {
	if n == nil {
		return c.fail(nil, errors.New("missing YAML node"))
	}
	if c.aliasDepth > 0 {
		if err := c.countAliasWork(n); err != nil {
			return err
		}
	}
	switch n.Kind {
	case yaml.ScalarNode:
		return c.scalar(n)
	case yaml.MappingNode:
		return c.mapping(n, depth)
	case yaml.SequenceNode:
		return c.sequence(n, depth)
	case yaml.AliasNode:
		target, err := c.aliasTarget(n)
		if err != nil {
			return err
		}
		c.enterAlias()
		err = c.value(target, depth)
		c.leaveAlias()
		return err
	}
	return c.fail(n, fmt.Errorf("unexpected YAML node kind %d", n.Kind))
}

func (c *yamlConverter) countAliasWork(n *yaml.Node) error {
	c.aliasWork++
	if c.aliasWork > MaxDocumentSize || c.aliasBytes+len(c.out)-c.aliasStart > MaxDocumentSize {
		return c.fail(n, errAliasLimit)
	}
	return nil
}

func (c *yamlConverter) enterAlias() {
	if c.aliasDepth == 0 {
		c.aliasStart = len(c.out)
	}
	c.aliasDepth++
}

func (c *yamlConverter) leaveAlias() {
	c.aliasDepth--
	if c.aliasDepth == 0 {
		c.aliasBytes += len(c.out) - c.aliasStart
	}
}

// aliasTarget returns what alias n refers to, refusing an alias to a node
// that contains it.
func (c *yamlConverter) aliasTarget(n *yaml.Node) (*yaml.Node, error) {
	if n.Alias == nil {
		return nil, c.fail(n, fmt.Errorf("unknown anchor %q", n.Value))
	}
	if _, active := c.anchored[n.Alias]; active {
		return nil, c.fail(n, fmt.Errorf("anchor %q value contains itself", n.Value))
	}
	return n.Alias, nil
}

func (c *yamlConverter) scalar(n *yaml.Node) error {
	s, err := resolveScalar(n)
	if err != nil {
		return c.fail(n, err)
	}
	switch s.kind {
	case kindNull:
		c.out = append(c.out, "null"...)
	case kindBool:
		c.out = strconv.AppendBool(c.out, s.b)
	case kindInt:
		c.out = strconv.AppendInt(c.out, s.i, 10)
	case kindUint:
		c.out = strconv.AppendUint(c.out, s.u, 10)
	case kindFloat:
		if math.IsInf(s.f, 0) || math.IsNaN(s.f) {
			return c.fail(n, fmt.Errorf("%s cannot be represented in JSON", n.Value))
		}
		c.out = appendJSONFloat(c.out, s.f)
	default:
		c.out = appendJSONString(c.out, s.str)
	}
	return nil
}

func (c *yamlConverter) enter(n *yaml.Node, depth int) error {
	if depth > MaxDepth {
		return c.fail(n, fmt.Errorf("nesting deeper than %d levels", MaxDepth))
	}
	if n.Anchor != "" {
		if c.anchored == nil {
			c.anchored = make(map[*yaml.Node]struct{})
		}
		c.anchored[n] = struct{}{}
	}
	return nil
}

func (c *yamlConverter) leave(n *yaml.Node) {
	if n.Anchor != "" {
		delete(c.anchored, n)
	}
}

func (c *yamlConverter) sequence(n *yaml.Node, depth int) error {
	if err := c.enter(n, depth); err != nil {
		return err
	}
	c.out = append(c.out, '[')
	for i, item := range n.Content {
		if i > 0 {
			c.out = append(c.out, ',')
		}
		c.mark(item)
		c.segs = append(c.segs, pathSeg{index: i})
		err := c.value(item, depth+1)
		c.segs = c.segs[:len(c.segs)-1]
		if err != nil {
			return err
		}
	}
	c.out = append(c.out, ']')
	c.leave(n)
	return nil
}

func isMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && (k.Tag == "" || k.Tag == "!" || k.Tag == tagMerge)
}

// object is the state of one JSON object being written.
type object struct {
	empty bool
	// seen holds the keys written so far; it exists only for a mapping
	// with merge keys, which must not override them.
	seen map[string]struct{}
}

func (c *yamlConverter) mapping(n *yaml.Node, depth int) error {
	if err := c.enter(n, depth); err != nil {
		return err
	}
	if len(n.Content)%2 != 0 {
		return c.fail(n, errors.New("mapping with a key but no value"))
	}
	obj := object{empty: true}
	var merges []*yaml.Node
	for i := 0; i < len(n.Content); i += 2 {
		if isMergeKey(n.Content[i]) {
			merges = append(merges, n.Content[i+1])
		}
	}
	if merges != nil {
		obj.seen = make(map[string]struct{})
	}
	c.out = append(c.out, '{')
	for i := 0; i < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if isMergeKey(k) {
			continue
		}
		key, err := c.key(k)
		if err != nil {
			return err
		}
		if obj.seen != nil {
			obj.seen[key] = struct{}{}
		}
		if err := c.member(&obj, k, key, v, depth); err != nil {
			return err
		}
	}
	for _, m := range merges {
		if err := c.merge(&obj, m, depth); err != nil {
			return err
		}
	}
	c.out = append(c.out, '}')
	c.leave(n)
	return nil
}

func (c *yamlConverter) member(obj *object, k *yaml.Node, key string, v *yaml.Node, depth int) error {
	if !obj.empty {
		c.out = append(c.out, ',')
	}
	obj.empty = false
	c.mark(k)
	c.out = appendJSONString(c.out, key)
	c.out = append(c.out, ':')
	c.segs = append(c.segs, pathSeg{key: key, index: -1})
	err := c.value(v, depth+1)
	c.segs = c.segs[:len(c.segs)-1]
	return err
}

var errMergeValue = errors.New("map merge requires map or sequence of maps as the value")

// merge adds the keys of a merge value (a mapping, an alias to one, or a
// sequence of those) that obj does not have yet.
func (c *yamlConverter) merge(obj *object, m *yaml.Node, depth int) error {
	switch m.Kind {
	case yaml.MappingNode, yaml.AliasNode:
		return c.mergeOne(obj, m, depth)
	case yaml.SequenceNode:
		for _, item := range m.Content {
			if item.Kind != yaml.MappingNode && item.Kind != yaml.AliasNode {
				return c.fail(item, errMergeValue)
			}
			if err := c.mergeOne(obj, item, depth); err != nil {
				return err
			}
		}
		return nil
	}
	return c.fail(m, errMergeValue)
}

func (c *yamlConverter) mergeOne(obj *object, m *yaml.Node, depth int) error {
	if m.Kind != yaml.AliasNode {
		return c.mergeMapping(obj, m, depth)
	}
	target, err := c.aliasTarget(m)
	if err != nil {
		return err
	}
	if target.Kind != yaml.MappingNode {
		return c.fail(m, errMergeValue)
	}
	c.enterAlias()
	err = c.mergeMapping(obj, target, depth)
	c.leaveAlias()
	return err
}

// mergeMapping merges mapping m into obj: its own keys first, then its
// merge keys, each key only if obj does not have it, as yaml.v3 does.
func (c *yamlConverter) mergeMapping(obj *object, m *yaml.Node, depth int) error {
	if len(m.Content)%2 != 0 {
		return c.fail(m, errors.New("mapping with a key but no value"))
	}
	if err := c.enter(m, depth); err != nil {
		return err
	}
	var nested []*yaml.Node
	for i := 0; i < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if c.aliasDepth > 0 {
			// Skipped keys write nothing, so count them as work.
			if err := c.countAliasWork(k); err != nil {
				return err
			}
		}
		if isMergeKey(k) {
			nested = append(nested, v)
			continue
		}
		key, err := c.key(k)
		if err != nil {
			return err
		}
		if _, ok := obj.seen[key]; ok {
			continue
		}
		obj.seen[key] = struct{}{}
		if err := c.member(obj, k, key, v, depth); err != nil {
			return err
		}
	}
	for _, nm := range nested {
		if err := c.merge(obj, nm, depth); err != nil {
			return err
		}
	}
	c.leave(m)
	return nil
}

// key converts a mapping key to the text of a JSON object key.
func (c *yamlConverter) key(k *yaml.Node) (string, error) {
	n := k
	if n.Kind == yaml.AliasNode {
		target, err := c.aliasTarget(n)
		if err != nil {
			return "", err
		}
		n = target
	}
	if n.Kind != yaml.ScalarNode {
		return "", c.fail(k, errors.New("unsupported map key: a mapping or sequence cannot be a JSON object key"))
	}
	s, err := resolveScalar(n)
	if err != nil {
		return "", c.fail(k, err)
	}
	key, ok := keyString(s)
	if !ok {
		return "", c.fail(k, errors.New("unsupported map key: null"))
	}
	return key, nil
}
