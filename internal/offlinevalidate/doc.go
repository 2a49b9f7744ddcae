// Package offlinevalidate validates Kubernetes manifests offline, without an
// API server, with the same rules the dnsplane API server applies: strict
// decoding (unknown and duplicate fields, with their line and column), then
// each kind's strategy (internal/registry): upstream's defaulting and
// validation, and the pod DNS rules of every pod template carrier. It is the
// engine of `dnsplane validate`, and reads the pod for `dnsplane resolvconf`.
//
// A manifest file may hold many objects (YAML documents or concatenated JSON
// values); each is checked on its own and every problem is reported, so one
// run shows a user everything that kube-apiserver would reject.
//
// The rules themselves live in internal/registry, internal/validation and
// internal/strictdecode; this package runs them over files and stdin where
// no server is asked. (It was internal/manifest, a name that read like a
// manifest data type.)
package offlinevalidate
