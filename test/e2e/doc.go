// Package e2e holds end-to-end tests of `dnsplane apiserver`: they build the
// binary once, run it as a child process over a temporary data dir (embedded
// etcd, or an external etcd started by the test), and drive it with the
// installed kubectl and with client-go, as a user would.
//
// Run them with
//
//	go test ./test/e2e/ -count=1 -v
//
// The kubectl tests skip when kubectl is not on PATH, the external etcd test
// when etcd is not installed.
package e2e
