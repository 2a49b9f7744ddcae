// Package leaderelect runs a function only while this process holds a
// Lease, as kube-controller-manager and kube-scheduler do with
// --leader-elect: client-go's leaderelection over a Lease lock
// (resourcelock.LeasesResourceLock), kube's default timings, and the
// lease released on a clean stop so that a standby takes over within one
// retry. `dnsplane controllers` and `dnsplane scheduler` both elect through
// it (docs/controllers.md, "Leader election").
package leaderelect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/google/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Durations are leader election's timings.
type Durations struct {
	// Lease is how long a holder's lease lasts after its last renewal
	// before a standby may take it.
	Lease time.Duration
	// RenewDeadline is how long the holder keeps trying to renew before it
	// gives up leading.
	RenewDeadline time.Duration
	// Retry is how often a standby tries to take the lease and the holder
	// renews it.
	Retry time.Duration
}

// DefaultDurations are component-base's LeaderElectionConfiguration
// defaults, which kube-controller-manager and kube-scheduler run with:
// 15 s lease, 10 s renew deadline, 2 s retry.
func DefaultDurations() Durations {
	return Durations{Lease: 15 * time.Second, RenewDeadline: 10 * time.Second, Retry: 2 * time.Second}
}

// ErrLeaseLost is what Run's error is (errors.Is) when another holder
// took the lease or it could not be renewed in time: kube's components
// exit then, so that they never act beside the new leader.
var ErrLeaseLost = errors.New("lost the lease")

// LostError is Run's error when the lease was lost: its message names the
// lease, and it is ErrLeaseLost.
type LostError struct {
	Lease string // namespace/name
}

func (e *LostError) Error() string { return "lost the lease " + e.Lease }

// Is makes errors.Is(err, ErrLeaseLost) true for a *LostError.
func (e *LostError) Is(target error) bool { return target == ErrLeaseLost }

// Config is one lease and who runs for it.
type Config struct {
	// Namespace and Name are the Lease's.
	Namespace, Name string
	// Identity is the holder's name; "" is kube's hostname_uuid, so that
	// two processes on one host never share one.
	Identity string
	// Durations are the timings; zero is DefaultDurations.
	Durations Durations
	// RESTConfig reaches the API server; Run adds the user agent
	// leader-election and bounds each request by RenewDeadline, as
	// resourcelock.NewFromKubeconfig does.
	RESTConfig *rest.Config
	// EventRecorder, when set, records the LeaderElection events ("became
	// leader") on the Lease.
	EventRecorder resourcelock.EventRecorder
	Logger        *slog.Logger

	// client replaces the one built from RESTConfig (tests).
	client kubernetes.Interface
}

// Run calls lead once this process holds the lease, with a context that
// ends when the lease is lost or ctx ends, and returns once lead has
// returned. It returns lead's error; nil when ctx ended; and, when the
// lease was lost while ctx had not ended, a *LostError (joined with lead's
// error). When lead returns by itself, the lease is released and Run
// returns lead's error.
func Run(ctx context.Context, c Config, lead func(context.Context) error) error {
	lease := c.Namespace + "/" + c.Name
	log := c.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	d := c.Durations
	if d == (Durations{}) {
		d = DefaultDurations()
	}
	id := c.Identity
	if id == "" {
		host, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("leader election identity: %w", err)
		}
		// kube's uniquifier: the host name and a random suffix.
		id = host + "_" + uuid.NewString()
	}
	client := c.client
	if client == nil {
		if c.RESTConfig == nil {
			return errors.New("leader election: no client configuration")
		}
		cfg := rest.AddUserAgent(rest.CopyConfig(c.RESTConfig), "leader-election")
		cfg.Timeout = d.RenewDeadline
		var err error
		if client, err = kubernetes.NewForConfig(cfg); err != nil {
			return fmt.Errorf("leader election client: %w", err)
		}
	}
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, c.Namespace, c.Name, client.CoreV1(), client.CoordinationV1(),
		resourcelock.ResourceLockConfig{Identity: id, EventRecorder: c.EventRecorder})
	if err != nil {
		return fmt.Errorf("leader election lock %s: %w", lease, err)
	}
	electCtx, stopElecting := context.WithCancel(ctx)
	defer stopElecting()
	// The elector runs OnStartedLeading in a goroutine it does not wait
	// for; Run does, so that it returns only once lead has. ended keeps a
	// lead that had not started yet when the elector returned from
	// starting at all.
	var (
		mu       sync.Mutex
		ended    bool
		leading  chan struct{}
		leadErr  error
		resigned bool // lead returned while still leading
	)
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:          lock,
		LeaseDuration: d.Lease,
		RenewDeadline: d.RenewDeadline,
		RetryPeriod:   d.Retry,
		// Hand the lease over at once on a clean stop, as kube's
		// components do, instead of making the standby wait it out.
		ReleaseOnCancel: true,
		Name:            c.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(lctx context.Context) {
				mu.Lock()
				if ended {
					mu.Unlock()
					return
				}
				done := make(chan struct{})
				leading = done
				mu.Unlock()
				defer close(done)
				log.Info("leading", "lease", lease, "identity", id)
				leadErr = lead(lctx)
				if lctx.Err() == nil {
					resigned = true
					stopElecting()
				}
			},
			OnStoppedLeading: func() {
				if ctx.Err() == nil && electCtx.Err() == nil {
					log.Error("lost the lease, stopping", "lease", lease, "identity", id)
				}
			},
		},
	})
	if err != nil {
		return fmt.Errorf("leader election %s: %w", lease, err)
	}
	elector.Run(electCtx)
	mu.Lock()
	ended = true
	done := leading
	mu.Unlock()
	if done != nil {
		// leadErr and resigned are written before done is closed.
		<-done
	}
	if ctx.Err() != nil || resigned {
		return leadErr
	}
	return errors.Join(&LostError{Lease: lease}, leadErr)
}
