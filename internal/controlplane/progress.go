package controlplane

import "time"

// Progress hears how start-up goes, one step at a time: the phases Start
// goes through (etcd, certificates, the API server) and each component it
// starts, in order. cmd/dnsplane renders it (internal/progress): a live
// status on a terminal, plain lines otherwise (docs/operations.md,
// "Start-up"). Start calls it from its own goroutine only, one step
// after the other.
type Progress interface {
	// Starting says a step begins.
	Starting(name string)
	// Started says it is done: a Starter's Start returned, or a
	// component that has no Start was launched.
	Started(name string, took time.Duration)
}

// Step names of the phases before the components (which report their
// Name).
const (
	StepEtcd         = "etcd"
	StepCertificates = "certificates"
	StepAPIServer    = "API server"
)

type noProgress struct{}

func (noProgress) Starting(string)               {}
func (noProgress) Started(string, time.Duration) {}

// step reports name as starting and returns the function that reports it
// done.
func step(p Progress, name string) func() {
	p.Starting(name)
	t0 := time.Now()
	return func() { p.Started(name, time.Since(t0)) }
}
