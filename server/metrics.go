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
	would     *prometheus.CounterVec
	handler   http.Handler
}

// policyCollector reports the policy deciding now, read at each scrape:
// its revision, whether the last change was taken, and the counts of
// reloads and of the shadow revision's comparisons.
type policyCollector struct{ active func() Active }

var (
	policyInfo     = prometheus.NewDesc("veto_policy_info", "The policy deciding now: its revision, where it came from and the shadow revision beside it (value 1).", []string{"revision", "from", "shadow"}, nil)
	policyFailing  = prometheus.NewDesc("veto_policy_reload_failing", "1 while the last change of the policy was not taken (the last good one decides).", nil, nil)
	policyReloads  = prometheus.NewDesc("veto_policy_reloads_total", "Policies taken after the first (a revision activated, a file edited).", nil, nil)
	policyFailures = prometheus.NewDesc("veto_policy_reload_failures_total", "Changes of the policy not taken: they did not load or build.", nil, nil)
	shadowDiffs    = prometheus.NewDesc("veto_shadow_differences_total", "Calls the shadow revision decided otherwise than the active one.", nil, nil)
	shadowDropped  = prometheus.NewDesc("veto_shadow_dropped_total", "Calls the shadow revision could not compare or record (its queue full, the state down).", nil, nil)
)

func (c policyCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{policyInfo, policyFailing, policyReloads, policyFailures, shadowDiffs, shadowDropped} {
		ch <- d
	}
}

func (c policyCollector) Collect(ch chan<- prometheus.Metric) {
	a := c.active()
	failing := 0.0
	if a.Err != "" {
		failing = 1
	}
	ch <- prometheus.MustNewConstMetric(policyInfo, prometheus.GaugeValue, 1, a.Rev, a.From, a.ShadowRev)
	ch <- prometheus.MustNewConstMetric(policyFailing, prometheus.GaugeValue, failing)
	ch <- prometheus.MustNewConstMetric(policyReloads, prometheus.CounterValue, float64(a.Reloads))
	ch <- prometheus.MustNewConstMetric(policyFailures, prometheus.CounterValue, float64(a.Failures))
	ch <- prometheus.MustNewConstMetric(shadowDiffs, prometheus.CounterValue, float64(a.ShadowDiffs))
	ch <- prometheus.MustNewConstMetric(shadowDropped, prometheus.CounterValue, float64(a.ShadowDropped))
}

func newMetrics(active func() Active, more ...prometheus.Collector) *metrics {
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
	m.would = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "veto_would_deny_total", Help: "Calls allowed that a rule in monitor mode would have refused, by rule and reason code.",
	}, []string{"rule", "reason"})
	m.reg.MustRegister(m.decisions, m.latency, m.requests, m.storeErrs, m.would, policyCollector{active},
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
	if v.WouldDeny != "" {
		m.would.WithLabelValues(v.WouldDeny, v.WouldReason).Inc()
	}
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
