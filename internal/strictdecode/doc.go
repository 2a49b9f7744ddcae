// Package strictdecode decodes Kubernetes manifests (JSON or YAML, one or
// many documents) into dnsplane's Go types and reports every unknown and
// duplicate field with its field path and its line and column.
//
// It is the decoder behind `dnsplane validate` and the API server's
// fieldValidation=Strict|Warn|Ignore. The decode itself is
// sigs.k8s.io/json's UnmarshalStrict, the library kube-apiserver uses, so
// fatal errors and the text of each problem (`unknown field "spec.foo"`,
// `duplicate field "spec.paused"`) are byte-identical to upstream, in
// upstream order. This package only adds positions.
//
// # One pass per format
//
// JSON input that is one value (the usual case) is checked with json.Valid;
// a stream of several concatenated values is split with encoding/json's
// Decoder (json.RawMessage values). Each document is decoded once by
// sigs.k8s.io/json. Positions are found only when needed (a problem to
// locate, or a call to Document.Position): a small scanner then walks the
// bytes of that one document looking for just the paths asked for, so the
// memory used does not grow with the document.
//
// YAML input is parsed once into go.yaml.in/yaml/v3 nodes. One walk over the
// node tree writes the document as JSON and, for every mapping key and
// sequence item it writes, records which JSON byte offset came from which
// YAML line and column. Duplicate mapping keys are written to the JSON in
// their original order, so sigs.k8s.io/json reports YAML duplicates exactly
// like JSON ones (`duplicate field "spec.paused"`), with a path and a line.
// Upstream reports YAML duplicates as `line 14: key "paused" already set in
// map`, without a path; this package deliberately uses the JSON form for
// both. Because the YAML keeps its document order, problems are reported in
// document order for YAML too (upstream sorts YAML unknown fields by key).
//
// dnsplane's API types shadow upstream ones by embedding them inline, which
// would add the embedded struct's name to the field path of a type error
// ("DeploymentSpec.spec.DeploymentSpec.replicas"). Decode removes exactly
// those hops, so fatal errors read as kube-apiserver's do for the same body.
//
// # YAML scalars
//
// Scalars are converted the way a YAML 1.2 core-schema parser resolves them
// (the rules of go.yaml.in/yaml/v3, except booleans), with the output shaped like
// sigs.k8s.io/yaml's YAMLToJSON for an untyped target:
//
//   - !!null (`null`, `Null`, `NULL`, `~`, empty) becomes JSON null.
//   - !!bool becomes a JSON boolean. Booleans follow YAML 1.1, as
//     sigs.k8s.io/yaml (and so kubectl and kube-apiserver) reads them: `true`,
//     `yes`, `on`, `y` and their negatives in lower, Title or UPPER case, so
//     `paused: yes` decodes as upstream. Quoted, they stay strings.
//   - !!int (decimal, `0x`, `0o`, `0b`, a leading-zero octal such as `017`,
//     `_` separators) becomes a JSON integer in decimal. Integers that fit
//     neither int64 nor uint64 resolve as !!float, as in yaml.v3.
//   - !!float becomes a JSON number formatted like encoding/json formats a
//     float64, so `1.0` and `1e3` become `1` and `1000` (as upstream, which
//     round-trips through float64). `.inf`, `-.inf` and `.nan` cannot be
//     represented in JSON and are an error, as in upstream.
//   - !!timestamp (an unquoted `2001-12-14`) stays the string as written, as
//     in sigs.k8s.io/yaml for an untyped target.
//   - !!binary is base64-decoded to a string (as yaml.v3 and yaml.v2 do).
//   - Quoted, literal and folded scalars, !!str, and scalars with any other
//     tag are strings; `"80"` stays a string.
//   - An explicit tag must fit the value (`!!int abc` is an error, as in
//     yaml.v3); `!!float 1` is allowed and gives 1.
//
// Mapping keys become JSON object keys: strings as written; integers in
// decimal; floats formatted as sigs.k8s.io/yaml does
// (strconv.FormatFloat(f, 'g', -1, 32), with `.inf`, `-.inf`, `.nan`); booleans
// as `true`/`false`. A null, mapping or sequence key is an error, as in
// sigs.k8s.io/yaml.
//
// Merge keys (`<<`) work as in yaml.v3: the mapping's own keys win over merged
// ones, and among merged mappings the earlier one wins. Merged keys are
// written after the mapping's own keys. Several `<<` keys in one mapping are
// all merged, in order (yaml.v3 rejects that mapping as a duplicate key).
//
// # Documents
//
// Split returns only non-empty documents: YAML documents that hold only
// comments or `---`, and documents whose value is null, are skipped (as
// kubectl does), so Document.Index counts the documents returned.
// A document's Start is where its value begins (for YAML, the first node
// after any `---` and comments).
//
// Lines and columns are 1-based. Columns count characters (UTF-8 code points)
// from the start of the line, like yaml.v3.
//
// # Limits
//
// Input is untrusted. A document larger than MaxDocumentSize (3 MiB, the
// kube-apiserver request limit) is an error before it is decoded; a YAML
// document is measured as the text between document markers, before it is
// parsed. Nesting deeper than MaxDepth is an error naming the path. YAML
// alias expansion is bounded: the JSON written while expanding aliases, and
// the nodes visited while expanding them (keys skipped by merges included),
// each count against MaxDocumentSize, so a "billion laughs" input fails
// quickly. Input containing a NUL byte is rejected as binary data. Nothing in
// this package panics on bad input: a panic inside the YAML parser, or in a
// type's UnmarshalJSON during Decode, is turned into an error.
//
// Errors from Split are *InputError values with a position. For YAML syntax
// errors the line is the one yaml.v3 reports (as every Kubernetes tool
// prints it; for some parser errors that is the line of the enclosing
// construct); where yaml.v3 gives none, the position is found here.
package strictdecode
