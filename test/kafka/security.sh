# shellcheck shell=bash
# The SASL_SSL listener's material, for cluster.sh (sourced, not run; it
# uses cluster.sh's DIR, NODES, IDP_PORT, alive, port_open, sasl_bootstrap):
# a test CA and one certificate per node, the SCRAM-SHA-512 users the
# storage format creates, and the test identity provider (test/kafka/idp)
# whose JWKS the brokers' OAUTHBEARER validator reads. Secrets are test
# values, written under DIR/secrets for the clients that need them.

# user:password pairs, SCRAM-SHA-512, created by `kafka-storage format --add-scram`.
SCRAM_USERS=(kproxy:kproxy-scram-secret admin:admin-scram-secret)
# The OAuth client kproxy logs in as (client-credentials grant), and its secret.
OAUTH_CLIENT_ID=kproxy
OAUTH_CLIENT_SECRET=kproxy-oauth-secret
IDP_TOKEN_LIFETIME=${KAFKA_IDP_TOKEN_LIFETIME:-20s}

# make_pki: DIR/pki/ca.pem and, per node, nodeN.pem (its key and
# certificate for 127.0.0.1/localhost, Kafka's PEM keystore), once.
make_pki() {
  local p=$DIR/pki i ext
  mkdir -p "$p"
  if [[ ! -f $p/ca.pem ]]; then
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=kproxy test Kafka CA" \
      -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
      -keyout "$p/ca.key" -out "$p/ca.pem" 2>/dev/null || kafka_die "openssl: the test CA"
  fi
  ext=$'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment'
  for ((i = 1; i <= NODES; i++)); do
    [[ -f $p/node$i.pem ]] && continue
    openssl req -newkey rsa:2048 -nodes -subj "/CN=kafka-node$i" \
      -keyout "$p/node$i.key" -out "$p/node$i.csr" 2>/dev/null &&
      openssl x509 -req -in "$p/node$i.csr" -CA "$p/ca.pem" -CAkey "$p/ca.key" -CAcreateserial \
        -days 3650 -extfile <(printf '%s\n' "$ext") -out "$p/node$i.crt" 2>/dev/null ||
      kafka_die "openssl: node $i's certificate"
    cat "$p/node$i.key" "$p/node$i.crt" >"$p/node$i.pem"
    rm -f "$p/node$i.csr"
  done
}

# write_secrets: the clients file of the IdP and one file per secret.
write_secrets() {
  local s=$DIR/secrets u
  mkdir -p "$s"
  chmod 700 "$s"
  for u in "${SCRAM_USERS[@]}"; do printf '%s\n' "${u#*:}" >"$s/scram-${u%%:*}"; done
  printf '%s\n' "$OAUTH_CLIENT_SECRET" >"$s/oauth-$OAUTH_CLIENT_ID"
  printf '{"%s": {"secret": "%s", "subject": "%s"}}\n' "$OAUTH_CLIENT_ID" "$OAUTH_CLIENT_SECRET" "$OAUTH_CLIENT_ID" >"$s/idp-clients.json"
}

idp_url() { echo "http://127.0.0.1:$IDP_PORT"; }

idp_pid() { # prints the IdP's pid if it runs
  local f=$DIR/idp/idp.pid pid
  [[ -f $f ]] || return 1
  pid=$(cat "$f")
  [[ $pid =~ ^[0-9]+$ ]] && alive "$pid" || return 1
  grep -qF -- "$DIR/secrets/idp-clients.json" <(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
  echo "$pid"
}

# start_idp: builds test/kafka/idp (Go's build cache makes a rebuild
# instant) and starts it on IDP_PORT, unless it runs.
start_idp() {
  local d=$DIR/idp bin pid
  idp_pid >/dev/null && return 0
  command -v go >/dev/null || kafka_die "the test identity provider needs Go (test/kafka/idp)"
  mkdir -p "$d"
  bin=$d/kproxy-test-idp
  (cd "$KAFKA_SCRIPTS/../.." && go build -o "$bin" ./test/kafka/idp) 8>&- || kafka_die "building test/kafka/idp failed"
  for _ in $(seq 50); do port_open "$IDP_PORT" || break; sleep 0.2; done
  port_open "$IDP_PORT" && kafka_die "port $IDP_PORT (test identity provider) is in use by another process"
  setsid "$bin" -addr "127.0.0.1:$IDP_PORT" -issuer "$(idp_url)" -audience kafka \
    -token-lifetime "$IDP_TOKEN_LIFETIME" -clients "$DIR/secrets/idp-clients.json" \
    </dev/null >>"$d/idp.log" 2>&1 8>&- &
  pid=$!
  echo "$pid" >"$d/idp.pid"
  for _ in $(seq 100); do
    port_open "$IDP_PORT" && break
    alive "$pid" || { tail -n 5 "$d/idp.log" >&2; kafka_die "the test identity provider exited"; }
    sleep 0.1
  done
  port_open "$IDP_PORT" || kafka_die "the test identity provider does not listen on $IDP_PORT"
  kafka_log "test identity provider started (pid $pid, $(idp_url), token lifetime $IDP_TOKEN_LIFETIME)"
}

stop_idp() {
  local pid
  pid=$(idp_pid) || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 50); do alive "$pid" || break; sleep 0.1; done
  alive "$pid" && kill -KILL "$pid" 2>/dev/null
  rm -f "$DIR/idp/idp.pid"
  kafka_log "test identity provider stopped"
}

# print_security_env: the SASL_SSL listener's settings, as shell
# assignments for eval (the names the conformance suite reads).
print_security_env() {
  local u=${SCRAM_USERS[0]}
  cat <<ENV
export KPROXY_KAFKA_SASL_SSL_BOOTSTRAP=$(sasl_bootstrap)
export KPROXY_KAFKA_CA_FILE=$DIR/pki/ca.pem
export KPROXY_KAFKA_SCRAM_USER=${u%%:*}
export KPROXY_KAFKA_SCRAM_PASSWORD_FILE=$DIR/secrets/scram-${u%%:*}
export KPROXY_KAFKA_IDP_URL=$(idp_url)
export KPROXY_KAFKA_OAUTH_TOKEN_ENDPOINT=$(idp_url)/token
export KPROXY_KAFKA_OAUTH_CLIENT_ID=$OAUTH_CLIENT_ID
export KPROXY_KAFKA_OAUTH_CLIENT_SECRET_FILE=$DIR/secrets/oauth-$OAUTH_CLIENT_ID
ENV
}
