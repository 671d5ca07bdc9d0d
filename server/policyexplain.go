package server

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/kproxy/kproxy/internal/config"
	"github.com/kproxy/kproxy/policy"
)

// withPolicyExplain adds GET /policy/explain to the admin endpoint h: the
// explanation, as `kproxy policy explain --output json` prints it, of one
// question under the policy in force (running). The endpoint already serves
// that policy on /config, so this reveals nothing it did not.
func withPolicyExplain(h http.Handler, running func() *config.Config) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", h)
	mux.HandleFunc("GET /policy/explain", func(w http.ResponseWriter, r *http.Request) {
		x, status, err := explainQuery(running(), r)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err != nil {
			enc.Encode(map[string]string{"error": err.Error()})
			return
		}
		enc.Encode(x)
	})
	return mux
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
