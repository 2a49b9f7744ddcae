package controlplane

import (
	"context"
	"errors"
	"time"

	"github.com/dnsplane/dnsplane/internal/apiserver"
)

// apiServerComponent is the API server's HTTPS serving, the first component
// started and the last stopped.
type apiServerComponent struct {
	serving *apiserver.Serving
	timeout time.Duration
}

func (a *apiServerComponent) Name() string { return "apiserver" }

// Run serves until ctx ends, then shuts down gracefully: open requests
// (watches included) get the shutdown timeout.
func (a *apiServerComponent) Run(ctx context.Context) error {
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.timeout)
		defer cancel()
		return a.serving.Shutdown(sctx)
	case <-a.serving.Done():
		if err := a.serving.Err(); err != nil {
			return err
		}
		return errors.New("stopped serving")
	}
}
