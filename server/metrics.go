package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/vetohq/veto"
)

// metrics are the service's Prometheus metrics, on a registry of its own
// (two servers in one process do not collide). Labels are rule ids and
// reason codes, never anything from a call's arguments.
type metrics struct {
	reg       *prometheus.Registry
	decisions *prometheus.CounterVec
	latency   prometheus.Histogram
	requests  *prometheus.HistogramVec
	storeErrs prometheus.Counter
	handler   http.Handler
}

func newMetrics(more ...prometheus.Collector) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.decisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "veto_decisions_total", Help: "Decisions made, by verdict, rule and reason code.",
	}, []string{"verdict", "rule", "reason"})
	m.latency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "veto_decision_seconds", Help: "Time to decide one call, recording included.",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
	})
	m.requests = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "veto_http_request_seconds", Help: "HTTP requests served, by route and status.",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
	}, []string{"route", "code"})
	m.storeErrs = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "veto_store_errors_total", Help: "Requests the state refused (locked, full, damaged, unreachable…).",
	})
	m.reg.MustRegister(m.decisions, m.latency, m.requests, m.storeErrs,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.reg.MustRegister(more...)
	m.handler = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
	return m
}

func (m *metrics) decision(v *veto.Verdict, took time.Duration) {
	verdict, reason := "allow", v.Reason
	if !v.Allowed {
		verdict = "deny"
	}
	m.decisions.WithLabelValues(verdict, v.Rule, reason).Inc()
	if took > 0 {
		m.latency.Observe(took.Seconds())
	}
}

func (m *metrics) request(route string, code int, took time.Duration) {
	m.requests.WithLabelValues(route, strconv.Itoa(code)).Observe(took.Seconds())
}

func (m *metrics) storeError() { m.storeErrs.Inc() }

func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	s.metrics.handler.ServeHTTP(w, r)
}
