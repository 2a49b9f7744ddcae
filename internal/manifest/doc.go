// Package manifest validates Kubernetes manifests offline with the same rules
// the dnsplane API server applies: strict decoding (unknown and duplicate
// fields, with their line and column), defaulting, and the pod DNS rules of
// every pod template carrier. It is the engine of `dnsplane validate`.
//
// A manifest file may hold many objects (YAML documents or concatenated JSON
// values); each is checked on its own and every problem is reported, so one
// run shows a user everything that kube-apiserver would reject.
package manifest
