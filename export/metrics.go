package export

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the exporters' Prometheus metrics, labelled by sink name
// (the operator's, never anything from a call).
type Metrics struct {
	sent    *prometheus.CounterVec
	errors  *prometheus.CounterVec
	backlog *prometheus.GaugeVec
	lag     *prometheus.GaugeVec
}

// NewMetrics returns the metrics, not registered anywhere.
func NewMetrics() *Metrics {
	return &Metrics{
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "veto_export_sent_total", Help: "Events a sink accepted (an event sent again after a failure or a restart counts again).",
		}, []string{"sink"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "veto_export_errors_total", Help: "Failed exports: a batch the sink refused, a log or cursor that could not be read or written.",
		}, []string{"sink"}),
		backlog: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "veto_export_backlog", Help: "Events stored and not yet accepted by the sink, as of its last pass.",
		}, []string{"sink"}),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "veto_export_cursor_lag_seconds", Help: "How far the sink's cursor is behind the clock (at least the window once caught up).",
		}, []string{"sink"}),
	}
}

// Collectors are the metrics, for a registry.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.sent, m.errors, m.backlog, m.lag}
}
