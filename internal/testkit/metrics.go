package testkit

import (
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// Metric is a single Prometheus metric: a Counter, a Gauge, or one child of
// a vector (CounterVec.WithLabelValues).
type Metric interface {
	Write(*dto.Metric) error
}

// CounterValue is the value of the counter m.
func CounterValue(t testing.TB, m Metric) float64 {
	t.Helper()
	return read(t, m).GetCounter().GetValue()
}

// GaugeValue is the value of the gauge m.
func GaugeValue(t testing.TB, m Metric) float64 {
	t.Helper()
	return read(t, m).GetGauge().GetValue()
}

func read(t testing.TB, m Metric) *dto.Metric {
	t.Helper()
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		t.Fatalf("reading a metric: %v", err)
	}
	return &d
}
