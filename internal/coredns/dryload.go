package coredns

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
)

// DryLoad loads corefile as Start would, without serving it, and returns
// why it does not load: the DNS operator refuses to publish a Corefile
// that CoreDNS would reject (OpenShift publishes first, and a bad
// Corefile then only shows in CoreDNS's log, as the reload plugin keeps
// the old configuration).
//
// It is caddy's own validation (caddy.ValidateAndExecuteDirectives with
// justValidate), which CoreDNS itself offers no command for: the Corefile
// is parsed with dnsplane's plugin order (an unknown plugin is an error),
// the server blocks' keys are checked, and every plugin's setup function
// runs on a throwaway instance, so arguments, upstream addresses,
// policies, TLS files and kubeconfigs are checked as a real start checks
// them. Nothing listens and no startup callback runs: no connection is
// made and no port bound. What CoreDNS checks only when it builds the
// servers, a zone defined twice on one address, is not checked; the
// operator's Corefiles never have one (internal/operator/dnsspec refuses
// duplicate domains, internal/corefile duplicate stub domains).
//
// What setup reads must exist where DryLoad runs: a TLS CA file, a
// kubeconfig, and for a kubernetes plugin with neither kubeconfig nor
// endpoint, the pod's service account (render.Options.Offline renders
// stand-ins for those outside the cluster).
//
// Setting up the ready plugin touches state CoreDNS keeps per process: it
// empties the list of plugins whose readiness /ready reports, and
// registers its address for the next instance to open. DryLoad therefore
// refuses to run while an instance started here serves, and a process
// that dry-loads should not serve CoreDNS afterwards (dnsplane corefile
// exits; an operator beside a cluster DNS dry-loads in a child process).
func DryLoad(ctx context.Context, corefile string) (err error) {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("dry-loading Corefile: %w", err)
	}
	startMu.Lock()
	defer startMu.Unlock()
	if n := live.count(); n > 0 {
		return fmt.Errorf("dry-loading Corefile: %d CoreDNS instances serve in this process, and a dry load would reset their readiness reporting", n)
	}
	dnsserver.Directives = Directives()
	caddy.Quiet, dnsserver.Quiet = true, true
	defer func() {
		// caddy's Restart recovers a panicking plugin setup; this path
		// does not, and a Corefile must not crash the caller.
		// A setup that panics on this Corefile would panic at a real
		// start too: the Corefile does not load.
		if r := recover(); r != nil {
			err = &LoadError{Err: fmt.Errorf("a plugin's setup panicked: %v", r)}
		}
	}()
	in := caddy.CaddyfileInput{Contents: []byte(corefile), Filepath: "Corefile", ServerTypeName: "dns"}
	if err := caddy.ValidateAndExecuteDirectives(in, nil, true); err != nil {
		if resourceExhausted(err) {
			// The process ran out of descriptors or memory while a
			// plugin's setup opened a file: the same Corefile may load
			// at the next try.
			return fmt.Errorf("dry-loading Corefile: %w", err)
		}
		return &LoadError{Err: err}
	}
	return nil
}

// resourceExhausted reports whether err is the process running out of
// file descriptors or memory rather than something the Corefile says.
// CoreDNS's plugins wrap their errors with %w (plugin.Error), so the
// errno survives when the plugin kept it.
func resourceExhausted(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) || errors.Is(err, syscall.ENOMEM)
}

// LoadError is a Corefile CoreDNS does not load, with CoreDNS's reason
// (which names the file as "Corefile" and the line).
type LoadError struct {
	Err error
}

func (e *LoadError) Error() string { return "Corefile does not load: " + e.Err.Error() }

func (e *LoadError) Unwrap() error { return e.Err }

// IsLoadError reports whether err is a Corefile that does not load, as
// opposed to DryLoad not running at all or the process running out of
// descriptors or memory (a verdict on the process, not the Corefile).
func IsLoadError(err error) bool {
	var le *LoadError
	return errors.As(err, &le)
}
