package config

import (
	"slices"

	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/auth"
	"github.com/kproxy/kproxy/internal/encryption/encryptionconfig"
	"github.com/kproxy/kproxy/internal/largemessage/largemessageconfig"
	"github.com/kproxy/kproxy/internal/tlsconfig"
	"github.com/kproxy/kproxy/policy/policyconfig"
)

// Reference documents every key of the file, in the order the reference
// lists them. Keys inside SharedSections are documented once, under the
// section they repeat.
func Reference() []KeyDoc {
	return slices.Concat(upstreamKeys(), listenerKeys(), oauthBearerKeys(), serviceKeys(), limitKeys(),
		PluginReference(policyconfig.PolicySection()), PluginReference(policyconfig.AuditSection()), PluginReference(encryptionconfig.Section()),
		PluginReference(largemessageconfig.Section()), tracingKeys(), virtualClusterKeys())
}

func upstreamKeys() []KeyDoc {
	return slices.Concat(
		filter.KeysUnder("upstream", []KeyDoc{
			{Key: "", Meaning: "the Kafka cluster kproxy fronts: `bootstrap_servers` or `embedded`, exactly one"},
			{Key: "bootstrap_servers", DefaultNote: "required unless `embedded`", Meaning: "`host:port` list, tried in order; the first reachable one serves the bootstrap listener and the start-up metadata request"},
		}),
		filter.KeysUnder("upstream.embedded", []KeyDoc{
			{Key: "", Meaning: "start an in-memory kfake cluster instead of naming one (demo only: it keeps records in memory); at the top level only, where virtual clusters inherit it"},
			{Key: "brokers", Default: "3", Meaning: "brokers of the embedded cluster, 1 to 16"},
			{Key: "topics", Default: "[]", Meaning: "topics to create in the embedded cluster at start"},
			{Key: "default_partitions", Default: "6", Meaning: "partitions for those and auto-created topics"},
		}),
		filter.KeysUnder("upstream", []KeyDoc{
			{Key: "dial_timeout", Default: "10s", Meaning: "per upstream connection attempt"},
			{Key: "reconnect_backoff", Default: "100ms", Meaning: "after a failed dial, kproxy dials that upstream address again only after this wait, doubled per further failure; meanwhile its node's port refuses connections, and the bootstrap port too while every bootstrap server is down (see [docs/upstream.md](upstream.md))"},
			{Key: "reconnect_backoff_max", Default: "2s", DefaultNote: "or `reconnect_backoff` if longer", Meaning: "the longest such wait (±20% jitter); also how soon a node (or bootstrap server) that is back is noticed"},
			{Key: "metadata_refresh", Default: "30s", Meaning: "how often kproxy asks the cluster for its brokers itself, so that a node added at run time gets a listener on every replica, including those that relayed no Metadata naming it (see [docs/operations.md](operations.md), State and replicas)"},
		}),
		filter.KeysUnder("upstream.tls", []KeyDoc{
			{Key: "", Meaning: "when set, kproxy reaches the brokers over TLS; the files are read at start"},
			{Key: "ca_file", DefaultNote: "system roots", Meaning: "PEM bundle of the CAs to trust for the brokers' certificates"},
			{Key: "server_name", DefaultNote: "each broker's host", Meaning: "the name verified in the brokers' certificates"},
			{Key: "cert_file", DefaultNote: "none", Meaning: "PEM client certificate (chain) kproxy presents; with `key_file`, both or neither"},
			{Key: "key_file", DefaultNote: "none", Meaning: "PEM private key of `cert_file`"},
			{Key: "insecure_skip_verify", Default: "false", Meaning: "trust any certificate (tests only); not with `ca_file` or `server_name`"},
		}),
		filter.KeysUnder("upstream.sasl", []KeyDoc{
			{Key: "", Meaning: "kproxy's own SASL login to the brokers (see [docs/upstream.md](upstream.md#upstream-security-tls-scram-and-oauthbearer)); not with `listeners.sasl.mode: passthrough`, where each client's own login goes upstream"},
			{Key: "mechanism", DefaultNote: "required", Values: (*auth.Mechanisms)(nil).UpstreamNames(),
				Meaning: "`PLAIN`, `SCRAM-SHA-256`, `SCRAM-SHA-512` (with `username` and one of `password`, `password_file`, `password_env`) or `OAUTHBEARER` (with `token_endpoint`, `client_id` and one of `client_secret`, `client_secret_file`, `client_secret_env`)"},
			{Key: "username", DefaultNote: "required for PLAIN and SCRAM", Meaning: "kproxy's user on the cluster"},
			{Key: "password", Meaning: "its password, inline; exactly one of `password`, `password_file`, `password_env` for PLAIN and SCRAM"},
			{Key: "password_file", Meaning: "a file holding the password (its first line), such as a mounted Kubernetes Secret; read at start"},
			{Key: "password_env", Meaning: "the name of an environment variable holding the password (a Secret exposed with `secretKeyRef`); read at start"},
			{Key: "token_endpoint", DefaultNote: "required for OAUTHBEARER", Meaning: "the identity provider's token URL (client-credentials grant); `https://`, or `http://` to a loopback host only"},
			{Key: "client_id", DefaultNote: "required for OAUTHBEARER", Meaning: "kproxy's OAuth client id"},
			{Key: "client_secret", Meaning: "its secret, inline; exactly one of `client_secret`, `client_secret_file`, `client_secret_env` for OAUTHBEARER"},
			{Key: "client_secret_file", Meaning: "a file holding the client secret (its first line); read at start"},
			{Key: "client_secret_env", Meaning: "the name of an environment variable holding the client secret; read at start"},
			{Key: "scope", DefaultNote: "none sent", Meaning: "the token request's `scope`: scopes separated by single spaces, each printable ASCII without quotes or backslashes (RFC 6749); only with OAUTHBEARER"},
			{Key: "token_timeout", Default: "10s", Meaning: "bounds one token request; the token is shared by all connections and refreshed at 80% of its lifetime (at most 5 min before expiry, at least at half); only with OAUTHBEARER"},
			{Key: "token_endpoint_ca_file", DefaultNote: "system roots", Meaning: "PEM bundle of the CAs trusted for an `https://` `token_endpoint` instead of the system roots (a provider behind a private CA); only with OAUTHBEARER; checked at load"},
		}),
	)
}

func listenerKeys() []KeyDoc {
	return slices.Concat(
		filter.KeysUnder("listeners", []KeyDoc{
			{Key: "", Meaning: "where kproxy accepts clients and what it tells them"},
			{Key: "bind_host", Default: "127.0.0.1", Meaning: "address every listener binds"},
			{Key: "advertised_host", DefaultNote: "`bind_host`", Meaning: "host clients are told for every broker; required when `bind_host` is `0.0.0.0` or `::`"},
			{Key: "bootstrap_port", Default: "0", Meaning: "bootstrap listener port (0: any free port)"},
			{Key: "broker_port_base", Default: "0", Meaning: "node *N* is served on base + *N*; 0 picks any free port per node (tests only: replicas would disagree)"},
		}),
		filter.KeysUnder("listeners.brokers[]", []KeyDoc{
			{Key: "", Default: "[]", Meaning: "per-node overrides of the port and advertised host"},
			{Key: "node_id", DefaultNote: "required", Meaning: "the upstream node this entry is about (listed once)"},
			{Key: "port", Default: "0", Meaning: "port the node is served on instead of `broker_port_base` + node id (0: that one)"},
			{Key: "advertised_host", DefaultNote: "`listeners.advertised_host`", Meaning: "host clients are told for this node"},
		}),
		filter.KeysUnder("listeners.tls", []KeyDoc{
			{Key: "", Meaning: "when set, every listener speaks TLS; the key pair and the client CA bundle are re-read when their files change (checked at most once a second, on a new handshake), so a renewed Secret is served without a restart"},
			{Key: "cert_file", DefaultNote: "required", Meaning: "PEM certificate (chain) the listeners serve"},
			{Key: "key_file", DefaultNote: "required", Meaning: "PEM private key of `cert_file`"},
			{Key: "client_auth", Default: tlsconfig.ClientAuthNone, Values: []string{tlsconfig.ClientAuthNone, tlsconfig.ClientAuthRequest, tlsconfig.ClientAuthRequire},
				Meaning: "client certificates: `none` (not asked for), `request` (verified against `client_ca_file` when the client sends one) or `require` (a client without a valid one fails the handshake)"},
			{Key: "client_ca_file", DefaultNote: "required with `request` or `require`", Meaning: "PEM bundle client certificates are verified against"},
			{Key: "principal_from", DefaultNote: "none", Values: auth.PrincipalRules(),
				Meaning: "names a client by its verified certificate when SASL does not: `cn`, or the first SAN of a kind (`san:dns`, `san:email`, `san:uri`); needs `client_auth` `request` or `require`. A subject with more than one CN is refused at the handshake"},
		}),
		filter.KeysUnder("listeners.sasl", []KeyDoc{
			{Key: "", Meaning: "when set, clients must authenticate with SASL (SaslHandshake v0 and v1, SaslAuthenticate v0 to v2) before any other request"},
			{Key: "mode", Default: SASLModeTerminate, Values: []string{SASLModeTerminate, SASLModePassthrough},
				Meaning: "`terminate`: kproxy verifies clients against `users` (or OAUTHBEARER tokens) and logs in upstream with `upstream.sasl`, if any; `passthrough`: each client's SASL exchange goes upstream untouched and the broker verifies it (kproxy reads the user name from it)"},
			{Key: "mechanisms", Default: "[SCRAM-SHA-512, SCRAM-SHA-256]", Values: (*auth.Mechanisms)(nil).ServerNames(),
				Meaning: "mechanisms offered to clients, upper case; `PLAIN` sends the password itself, so it must be asked for (use it behind TLS); `OAUTHBEARER` needs `terminate` and an `oauthbearer` section; a program embedding kproxy may add its own ([docs/embedding.md](embedding.md#adding-a-sasl-mechanism))"},
			{Key: "session_lifetime", Default: "0s", Meaning: "terminate mode: every client's session ends this long after each (re-)authentication, as Kafka's `connections.max.reauth.ms`; clients using SaslAuthenticate v1+ are told and may re-authenticate on the connection (KIP-368), others are closed at their first request after it. 0: no expiry, else at least 1s"},
			{Key: "users[]", Default: "[]", Meaning: "terminate mode: the users PLAIN and SCRAM logins are checked against; required when one of those mechanisms is enabled"},
			{Key: "users[].name", DefaultNote: "required", Meaning: "the user name; the principal is `User:NAME`; unique"},
			{Key: "users[].credentials", DefaultNote: "required", Meaning: "salted SCRAM credentials printed by `kproxy hash-password`, at most one per SCRAM mechanism; PLAIN logins are checked against them too. Passwords are never written in the file"},
		}),
		filter.KeysUnder("listeners", []KeyDoc{
			{Key: "proxy_protocol", Meaning: "a load balancer's PROXY protocol header in front of every listener"},
			{Key: "proxy_protocol.mode", Default: ProxyProtocolOff, Values: []string{ProxyProtocolOff, ProxyProtocolOptional, ProxyProtocolRequired},
				Meaning: "`off`, `optional` or `required`: read a load balancer's PROXY protocol header (v1 or v2, before TLS) and use its client address for `cidr:` principals, per-address limits, logs and audit; `required` closes connections without a valid header, `optional` also serves connections without one (see [docs/operations.md](operations.md))"},
			{Key: "proxy_protocol.trusted_cidrs", Default: "[]", Meaning: "networks (`10.0.0.0/8`) or addresses of the balancers allowed to send a header; required unless `mode` is `off`; a header from any other peer closes the connection, and on a `required` listener so does any connection from another peer. The header must arrive within `limits.handshake_timeout`"},
			{Key: "port_per_broker", Default: "true", Meaning: "`false` serves neither the bootstrap port nor the per-broker ports (then `listeners.sni` is required); the other `listeners.*` keys keep applying to the SNI listener where they make sense (`sasl`, `proxy_protocol`)"},
		}),
		filter.KeysUnder("listeners.sni", []KeyDoc{
			{Key: "", Meaning: "one TLS port for bootstrap and every broker, routed by the TLS server name (SNI)"},
			{Key: "bind_host", DefaultNote: "`listeners.bind_host`", Meaning: "address the SNI listener binds"},
			{Key: "port", Default: "0", Meaning: "the one TLS port for bootstrap and every broker; 0 picks a free port (tests)"},
			{Key: "advertised_port", DefaultNote: "`listeners.sni.port`", Meaning: "port clients are told, when a load balancer in front listens on another (0: `listeners.sni.port`)"},
			{Key: "bootstrap_host", DefaultNote: "required", Meaning: "DNS name clients bootstrap from; a connection naming it reaches `upstream.bootstrap_servers`"},
			{Key: "broker_host_pattern", DefaultNote: "required", Meaning: "DNS name of each broker, holding `$(node_id)` once (`broker-$(node_id).kafka.example.com`); clients of this listener are told every broker as such a name at the SNI port; a connection naming it reaches that node. Names compare as ASCII host names, case-insensitive in ASCII only (RFC 6066): a name matching neither, one with any non-ASCII byte (a Unicode lookalike), or no SNI, fails the handshake (logged, `kproxy_sni_handshake_refused_total`)"},
			{Key: "tls", DefaultNote: "required", Meaning: "the keys of `listeners.tls` (`cert_file`, `key_file`, `client_auth`, `client_ca_file`, `principal_from`), for this listener; its key pair is served to names no entry of `certificates` covers; reloaded when the files change"},
			{Key: "certificates[]", Default: "[]", Meaning: "further key pairs, each served to the server names its certificate covers (the first match wins; otherwise `tls.cert_file`); reloaded when the files change"},
			{Key: "certificates[].cert_file", DefaultNote: "required", Meaning: "PEM certificate (chain)"},
			{Key: "certificates[].key_file", DefaultNote: "required", Meaning: "PEM private key of `cert_file`"},
		}),
	)
}

func oauthBearerKeys() []KeyDoc {
	return filter.KeysUnder("listeners.sasl.oauthbearer", []KeyDoc{
		{Key: "", DefaultNote: "required with OAUTHBEARER", Meaning: "how OAUTHBEARER tokens (JWTs, KIP-255) are verified in terminate mode: against the identity provider's keys, `iss`, `aud`, `exp`/`nbf` with clock skew, asymmetric algorithms only; the session lifetime is the token's remaining lifetime (see [docs/oauth.md](oauth.md))"},
		{Key: "jwks_url", DefaultNote: "this or `jwks_file`", Meaning: "the identity provider's JSON Web Key Set URL (`https://`, or `http://`); a redirect is followed only within the URL's host (or to `jwks_allowed_redirect_hosts`), never from `https` to `http`"},
		{Key: "jwks_file", DefaultNote: "this or `jwks_url`", Meaning: "the key set as a file instead"},
		{Key: "jwks_ca_file", DefaultNote: "system roots", Meaning: "PEM bundle of the CAs trusted for an `https://` `jwks_url` instead of the system roots (a provider behind a private CA); only with `jwks_url`; checked at load"},
		{Key: "jwks_allowed_redirect_hosts", Default: "[]", Meaning: "further hosts (name or IP, optionally `:port`) a `jwks_url` fetch may be redirected to; only with `jwks_url`; a redirect from `https` to `http` is refused whatever the host"},
		{Key: "issuer", DefaultNote: "required", Meaning: "must equal the token's `iss` exactly (the provider's discovery document's `issuer`)"},
		{Key: "audience", DefaultNote: "none (warning)", Meaning: "must be one of the token's `aud` values; left out, any audience passes and `kproxy validate` warns"},
		{Key: "principal_claim", Default: DefaultOAuthPrincipalClaim, Meaning: "string claim the principal `User:NAME` is taken from"},
		{Key: "principal_prefix", Default: `""`, Meaning: "put before the claim's value"},
		{Key: "clock_skew", Default: "30s", Meaning: "leeway for `exp`, `nbf`, `iat` (0s to 10m)"},
		{Key: "allowed_algorithms", Default: "[RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512]", Values: auth.SupportedJWTAlgorithms(),
			Meaning: "accepted JWS algorithms (also `EdDSA`), case-sensitive; `none` and `HS*` are refused at load"},
		{Key: "required_scopes", Default: "[]", Meaning: "scopes the token's `scope` (or `scp`) claim must all hold; the claim is split on single spaces only, and a scope with a tab, no-break space or other character outside printable ASCII refuses the token"},
		{Key: "jwks_refresh_interval", Default: "1h", Meaning: "scheduled key refresh (at least 1s); an unknown `kid` also refreshes, at most once per min(this, 10s)"},
		{Key: "jwks_timeout", Default: "5s", Meaning: "bound on one JWKS fetch, so on a login's wait for keys (at most 1m)"},
	})
}

func serviceKeys() []KeyDoc {
	return slices.Concat(
		filter.KeysUnder("admin", []KeyDoc{
			{Key: "", Meaning: "the HTTP endpoint for health, readiness, metrics and the configuration in force"},
			{Key: "listen", DefaultNote: "off", Meaning: "`host:port` for `/healthz`, `/readyz`, `/metrics`, `/brokers`, `/config`, `/policy/explain` (see the README's Admin endpoint); empty: no endpoint"},
			{Key: "pprof", Default: "false", Meaning: "also serve Go's profiler under `/debug/pprof/` on the admin endpoint (a profile shows internals, and a CPU profile costs CPU while it runs)"},
		}),
		filter.KeysUnder("metrics", []KeyDoc{
			{Key: "", Meaning: "optional metric series"},
			{Key: "principal_limit", Default: "0", Meaning: "0: no principal label; N (up to 10000): `kproxy_principal_requests_total{principal}` for the first N principals seen, the rest as `other`"},
		}),
		filter.KeysUnder("log", []KeyDoc{
			{Key: "", Meaning: "kproxy's own logs"},
			{Key: "level", Default: "info", Values: []string{"trace", "debug", "info", "warn", "error"}, Meaning: "the least severe level logged; `debug` adds a `request` line per request"},
			{Key: "format", Default: "json", Values: []string{"json", "console"}, Meaning: "`json` or `console` (human-readable lines, coloured only when the output is a terminal)"},
			{Key: "sample", Default: "10s", Meaning: "shortest interval between two lines of one repeated warning (an unreachable upstream, connections closed for the same reason); the lines held back are counted in the next"},
		}),
	)
}

func limitKeys() []KeyDoc {
	return filter.KeysUnder("limits", []KeyDoc{
		{Key: "", Meaning: "what one connection, and all of them, may cost"},
		{Key: "max_frame_bytes", Default: "104857600", Meaning: "larger frames close the connection before anything is allocated for them (at least 1024)"},
		{Key: "max_buffered_bytes", Default: "134217728", DefaultNote: "or `max_frame_bytes` if larger", Meaning: "bytes of all requests and responses held in memory for filters at once (frames, their decoding, buffered responses); beyond it kproxy stops reading from clients that want more; must be at least `max_frame_bytes` (see [docs/policy.md](policy.md#memory-bounds))"},
		{Key: "idle_timeout", Default: "10m", Meaning: "close a pair with no traffic and nothing in flight"},
		{Key: "max_in_flight", Default: "1000", Meaning: "owed responses per connection before kproxy stops reading it"},
		{Key: "shutdown_timeout", Default: "30s", Meaning: "how long SIGTERM waits for in-flight requests"},
		{Key: "handshake_timeout", Default: "10s", Meaning: "time a new connection has for each step of its handshake: the PROXY header, the TLS handshake, then SASL authentication"},
		{Key: "max_connections", Default: "0", Meaning: "open client connections at once (0: no cap), counted from accept (while the PROXY header, TLS and SASL handshakes are under way too); beyond it a new connection is closed unread (`connection_limit`)"},
		{Key: "max_connections_per_ip", Default: "0", Meaning: "the same per address (0: no cap): the TCP peer's from accept, then the client's a trusted PROXY header names (so behind a balancer, leave room for the connections whose header has not been read yet)"},
		{Key: "max_handshakes", Default: "1000", Meaning: "connections still in their handshake (PROXY header, TLS, SASL) at once; beyond it a new connection is closed unread (`handshake_limit`), so peers holding half-written handshakes cannot crowd out clients. 0: the default"},
	})
}

func tracingKeys() []KeyDoc {
	return filter.KeysUnder("tracing", []KeyDoc{
		{Key: "", Meaning: "OpenTelemetry request spans (see the README's Tracing section)"},
		{Key: "enabled", Default: "false", Meaning: "export one OpenTelemetry span per sampled Kafka request"},
		{Key: "endpoint", Default: DefaultTracingEndpoint, Meaning: "OTLP/HTTP receiver's base URL (`http://` or `https://`); spans go to its `/v1/traces`"},
		{Key: "ratio", Default: "0.01", Meaning: "share of requests traced, 0 to 1, decided when the request's header is read. Kafka requests carry no trace context, so every request span is a root and this is the parent-based ratio sampler's ratio"},
		{Key: "service_name", Default: DefaultTracingServiceName, Meaning: "the spans' `service.name`"},
		{Key: "queue_size", Default: "2048", Meaning: "sampled requests waiting for export, 1 to 1048576; when full, a span is dropped and counted in `kproxy_trace_spans_dropped_total`, never waited for"},
	})
}

func virtualClusterKeys() []KeyDoc {
	return filter.KeysUnder("virtual_clusters[]", []KeyDoc{
		{Key: "", Default: "[]", Meaning: "serve several tenants from one process, each on its own listeners with its own names, policy and label (see [docs/virtual-clusters.md](virtual-clusters.md)); when set, the top-level `listeners` (without ports or `sni`), `upstream` and `policy` are what each inherits, and the top level itself is not served"},
		{Key: "name", DefaultNote: "required", Meaning: "1-63 letters, digits, `.`, `_`, `-`, unique: the `virtual_cluster` label of metrics, log and audit lines, and the `VirtualCluster:NAME` principal"},
		{Key: "listeners", DefaultNote: "required", Meaning: "the keys of `listeners` (ports, `brokers`, `sni`, `tls`, `sasl`, `proxy_protocol`, ...); `bind_host`, `advertised_host`, `tls`, `sasl`, `proxy_protocol` and `port_per_broker` left out are the top level's; a fixed port used by two virtual clusters is refused at load"},
		{Key: "topic_prefix", Default: `""`, Meaning: "added to every topic name the tenant's clients send, removed from every name they are told; names without it are invisible to them. Letters, digits, `.`, `_`, `-`, at most 200. Two virtual clusters on one upstream may not have prefixes (of any kind) where one starts with the other, also when `.` and `_` count as one character, as Kafka counts them when it checks topic names for collisions"},
		{Key: "group_prefix", Default: `""`, Meaning: "the same for group ids (consumer, classic, share and streams groups)"},
		{Key: "transactional_id_prefix", Default: `""`, Meaning: "the same for transactional ids"},
		{Key: "cluster_id", DefaultNote: "the upstream's", Meaning: "the cluster id the tenant's clients are told (Metadata, DescribeCluster), so that caches keyed by cluster id keep tenants apart; at most 64 printable ASCII characters without spaces"},
		{Key: "cluster_operators", Default: "[]", Meaning: "principals, as in policy rules (`User:ops`, `cn:NAME`, `Claim:NAME=VALUE`, ...), allowed the APIs that act on the whole upstream cluster: SCRAM credentials, client quotas, `BROKER`/`BROKER_LOGGER`/`CLIENT_METRICS` configs, reassignments, leader elections, log dirs, features, delegation tokens; everyone else gets the API's authorization error (`CLUSTER_AUTHORIZATION_FAILED`) from kproxy (see [docs/virtual-clusters.md](virtual-clusters.md#cluster-wide-apis))"},
		{Key: "upstream", DefaultNote: "top-level `upstream`", Meaning: "the keys of `upstream` (not `embedded`), for this tenant"},
		{Key: "policy", DefaultNote: "top-level `policy`", Meaning: "the keys of `policy`, written in the tenant's own (unprefixed) names; reloaded with the file"},
		{Key: "encryption", DefaultNote: "top-level `encryption`", Meaning: "the keys of `encryption`, with `match` written in the tenant's own (unprefixed) names; records are bound to the cluster's (prefixed) names (see [docs/encryption.md](encryption.md))"},
		{Key: "large_messages", DefaultNote: "top-level `large_messages`", Meaning: "the keys of `large_messages`, with `match` written in the tenant's own (unprefixed) names; object keys start with the virtual cluster's name and the tenant's topic name (see [docs/large-messages.md](large-messages.md))"},
	})
}
