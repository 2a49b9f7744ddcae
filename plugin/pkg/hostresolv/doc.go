// Package hostresolv reads a node's resolv.conf the way kubelet does.
//
// It is a leaf on purpose: the node cache's searchopt plugin needs the host
// search list, and a CoreDNS build that adds our plugins must not link the
// pod DNS policy code (internal/resolvconf) to get it; nor could it, since
// Go refuses imports of another module's internal/ packages. The pod side,
// internal/resolvconf, builds on this package instead, so both read a host
// file with the same rules and the same errors.
//
// docs/resolvconf.md ("How the file is computed", step 1) states the rules
// as users see them.
package hostresolv
