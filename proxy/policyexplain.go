package proxy

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/policy"
)

// Each explanation compiles the policy in force, which takes milliseconds
// per thousand rules: an operator's question, not a load to serve. A peer
// of the unauthenticated admin port gets a bound on both what it may ask
// and how many questions run at once, and an HTTP answer past them.
const (
	// maxExplainQuery bounds the query string (414 past it): room for
	// every parameter at Kafka's longest names many times over.
	maxExplainQuery = 16 << 10
	// maxConcurrentExplains bounds the explanations being computed at
	// once (429 past it), so that a flood of them takes at most that many
	// cores from the data path.
	maxConcurrentExplains = 2
)

// withPolicyExplain adds GET /policy/explain to the admin endpoint h: the
// explanation, as `kproxy policy explain --output json` prints it, of one
// question under the policy in force (running). The endpoint already serves
// that policy on /config, so this reveals nothing it did not.
func withPolicyExplain(h http.Handler, running func() *config.Config) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", h)
	slots := make(chan struct{}, maxConcurrentExplains)
	mux.HandleFunc("GET /policy/explain", func(w http.ResponseWriter, r *http.Request) {
		if len(r.URL.RawQuery) > maxExplainQuery {
			writeExplain(w, http.StatusRequestURITooLong, nil, fmt.Errorf("query of %d bytes exceeds %d", len(r.URL.RawQuery), maxExplainQuery))
			return
		}
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
		default:
			w.Header().Set("Retry-After", "1")
			writeExplain(w, http.StatusTooManyRequests, nil, fmt.Errorf("%d explanations are being computed; ask again", maxConcurrentExplains))
			return
		}
		x, status, err := explainQuery(running(), r)
		writeExplain(w, status, x, err)
	})
	return mux
}

// writeExplain answers with status and x as JSON, or err as {"error": ...}.
func writeExplain(w http.ResponseWriter, status int, x *policy.Explanation, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err != nil {
		enc.Encode(map[string]string{"error": err.Error()})
		return
	}
	enc.Encode(x)
}

// explainQuery answers the question r's query parameters ask (the explain
// command's flags, with _ for -: principal, operation, topic, group,
// transactional_id, cluster, client_id, host, listener, cn, claim,
// virtual_cluster), with the HTTP status to answer it with.
func explainQuery(cfg *config.Config, r *http.Request) (*policy.Explanation, int, error) {
	v := r.URL.Query()
	spec := policy.QuestionSpec{
		Principal: v.Get("principal"), Operation: v.Get("operation"),
		Topic: v.Get("topic"), Group: v.Get("group"), TransactionalID: v.Get("transactional_id"),
		Cluster:  v.Has("cluster") && v.Get("cluster") != "false",
		ClientID: v.Get("client_id"), Host: v.Get("host"), Listener: v.Get("listener"), CN: v.Get("cn"),
		Claims: v["claim"], VirtualCluster: v.Get("virtual_cluster"),
	}
	q, err := spec.Question()
	if err != nil {
		return nil, http.StatusBadRequest, err
	}
	pol, key, err := cfg.ClusterPolicy(spec.VirtualCluster)
	if err != nil {
		return nil, http.StatusBadRequest, err
	}
	checker, err := policy.NewChecker(pol, key)
	if err != nil { // the policy in force compiled once already
		return nil, http.StatusInternalServerError, fmt.Errorf("compile the policy in force: %w", err)
	}
	x := checker.Explain(q)
	return &x, http.StatusOK, nil
}
