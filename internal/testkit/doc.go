// Package testkit holds the helpers the module's tests share: polling for a
// condition, free ports and loopback addresses, metric readers and a buffer
// safe for a child's concurrent writes. Each was written several times in
// _test.go files and the copies had drifted (issue 31 item 5).
//
// Only tests import it; test/arch checks that no other package does.
package testkit
