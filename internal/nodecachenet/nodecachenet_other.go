//go:build !linux

package nodecachenet

import (
	"context"
	"errors"
	"time"
)

// errUnsupported: interfaces and NOTRACK rules are Linux's (netlink,
// nftables).
var errUnsupported = errors.New("the node cache's interface and rules need Linux")

// Node is what Setup put in place.
type Node struct{}

// Setup fails outside Linux.
func Setup(context.Context, Config) (*Node, error) { return nil, errUnsupported }

// Check fails outside Linux.
func (*Node) Check(context.Context) error { return errUnsupported }

// Keep does nothing outside Linux.
func (*Node) Keep(context.Context, time.Duration) {}

// Teardown fails outside Linux.
func (*Node) Teardown(context.Context) (bool, error) { return false, errUnsupported }
