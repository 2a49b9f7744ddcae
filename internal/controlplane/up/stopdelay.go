package up

import (
	"context"
	"time"

	"github.com/dnsplane/dnsplane/internal/controlplane"
)

// stopDelayRole is `up --test-stop-delay D` (hidden, for tests only): a
// component started last, so stopped first, whose stop takes D, so that
// test/e2e's TestStopForcedBySecondSignal has an ordered stop to cut short.
type stopDelayRole struct{ d time.Duration }

func (r stopDelayRole) Validate() error { return nil }

func (r stopDelayRole) Components(controlplane.Cluster) ([]controlplane.Component, error) {
	return []controlplane.Component{r}, nil
}

func (r stopDelayRole) Name() string { return "test-stop-delay" }

func (r stopDelayRole) Run(ctx context.Context) error {
	<-ctx.Done()
	t := time.NewTimer(r.d)
	defer t.Stop()
	<-t.C
	return nil
}
