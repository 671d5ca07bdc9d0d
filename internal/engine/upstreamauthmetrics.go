package engine

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/labels"
)

// upstreamAuthMetrics count kproxy's own logins to the brokers over time:
// KIP-368 re-authentications of relayed connections and, with
// upstream.sasl.mechanism OAUTHBEARER, its token requests.
type upstreamAuthMetrics struct {
	reauths       *prometheus.CounterVec
	tokenRequests *prometheus.CounterVec
	tokenExpiry   prometheus.Gauge
}

func newUpstreamAuthMetrics(reg prometheus.Registerer) *upstreamAuthMetrics {
	m := &upstreamAuthMetrics{
		reauths: newCounterVec("kproxy_upstream_reauthentications_total",
			"KIP-368 re-authentications of kproxy's upstream SASL sessions on relayed connections, by result (success, failure).", labels.Result),
		tokenRequests: newCounterVec("kproxy_upstream_oauth_token_requests_total",
			"Token requests kproxy made to upstream.sasl.token_endpoint (OAUTHBEARER), by result (success, failure).", labels.Result),
		tokenExpiry: newGauge("kproxy_upstream_oauth_token_expiry_timestamp_seconds",
			"When kproxy's current upstream OAuth token expires (Unix time); 0 before the first token or if the endpoint did not say."),
	}
	reg.MustRegister(m.reauths, m.tokenRequests, m.tokenExpiry)
	return m
}

// observeToken counts one token request and logs it.
func (s *Server) observeToken(ev auth.TokenEvent) {
	m := s.metrics.upstreamAuth
	m.tokenRequests.WithLabelValues(labels.ResultOf(ev.Err)).Inc()
	if ev.Err != nil {
		s.log.Warn().Err(ev.Err).Bool("cached_token_used", ev.Stale).Dur("took", ev.Took).Msg("upstream OAuth token request failed")
		return
	}
	if !ev.Expiry.IsZero() {
		m.tokenExpiry.Set(float64(ev.Expiry.Unix()))
	}
	s.log.Info().Time("expiry", ev.Expiry).Dur("took", ev.Took).Msg("upstream OAuth token fetched")
}
