// Package upstream runs the real, unmodified kube-controller-manager and
// kube-scheduler, built from the k8s.io/kubernetes version in go.mod,
// against a bare `dnsplane apiserver` (issue 19): every informer they
// start must sync, nothing may fail to list or watch, and a pod must be
// scheduled to a Node object.
//
// Building the two binaries takes about 11 minutes and 3 GB on a cold cache,
// so the test runs only when DNSPLANE_UPSTREAM_CONTROLLERS=1 and skips
// otherwise. run.sh builds them in a scratch module that starts from
// dnsplane's go.mod and runs the test:
//
//	bash test/upstream/run.sh
//
// docs/development.md, "The upstream controllers run", says what it checks
// and what it showed.
package upstream
