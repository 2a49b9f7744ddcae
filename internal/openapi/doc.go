// Package openapi generates OpenAPI schemas (Swagger 2.0 definitions and
// OpenAPI 3.0 components) from dnsplane's Go API types by reflection.
//
// The schema of a type is what the strict decoder (package strictdecode,
// i.e. sigs.k8s.io/json with encoding/json's field rules) accepts for it,
// so the two cannot disagree:
//
//   - A struct's properties are its JSON fields exactly as encoding/json
//     resolves them: a field tagged "-" is skipped; unexported fields are
//     skipped; an anonymous struct field without a JSON name (`json:",inline"`
//     is such a field: encoding/json ignores the inline option) is
//     flattened; on a name clash the shallowest field wins, a tagged field
//     beats untagged ones at the same depth, and an unresolved tie drops the
//     name. So a wrapper that redeclares `template` shadows the upstream
//     field, and only the wrapper's type appears.
//   - Pointers are their element type; slices and arrays are arrays ([]byte
//     is a base64 string); maps are objects with additionalProperties;
//     the `,string` option makes a scalar a string.
//   - Types that decode themselves (json.Unmarshaler) are described by
//     their OpenAPISchemaType/OpenAPISchemaFormat/OpenAPIV3OneOfTypes
//     methods as upstream (metav1.Time is a date-time string, IntOrString
//     is int-or-string, Quantity a string or number), or by a small table
//     (RawExtension and FieldsV1 are objects with
//     x-kubernetes-preserve-unknown-fields). Any other such type is an
//     error, so a new one cannot be described wrongly by accident.
//
// Named structs become definitions named like upstream's: the Go package
// path with its first element's domain reversed, then the type name
// (k8s.io/api/core/v1.PodSpec is io.k8s.api.core.v1.PodSpec; dnsplane's
// github.com/dnsplane/dnsplane/api/core/v1.PodSpec is
// io.dnsplane.api.core.v1.PodSpec). Properties refer to them with $ref.
// Named non-struct types (DNSPolicy, ResourceList) are inlined.
//
// Patch metadata comes from the struct tags: patchStrategy becomes
// x-kubernetes-patch-strategy and patchMergeKey
// x-kubernetes-patch-merge-key. Upstream's list types live in comments
// (+listType), which reflection cannot see, so they are derived: a list
// with patchStrategy merge and a patchMergeKey is x-kubernetes-list-type
// map keyed by that key; merge without a key is a set; every other list is
// atomic. (Upstream names a second map key for some lists, e.g. ports'
// protocol; the derived form names only the merge key.)
//
// Top-level kinds carry x-kubernetes-group-version-kind as an array, as
// kube-apiserver publishes it and kubectl looks schemas up by it.
// Descriptions come from the SwaggerDoc methods: k8s.io/api's, and
// dnsplane's, generated from the doc comments under api/ by hack/swaggerdoc.
// A field's description is asked of the structs from the outermost one down
// to the one declaring it, so a wrapper may replace the description of a
// field it inherits (dnsPolicy on dnsplane's PodSpec); a wrapper type or a
// redeclared field without a description of its own borrows the one of the
// same-named struct it embeds. No property is marked required: the decoder
// enforces none.
package openapi
