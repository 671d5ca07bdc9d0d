#!/usr/bin/env bash
# Three kproxy replicas behind HAProxy on this machine, to try scale-out:
#
#   HAProxy   127.0.0.10:9092 (bootstrap) and :9100-9102 (brokers 0-2),
#             TCP mode, round robin per connection, PROXY protocol v2
#   kproxy    127.0.0.11, .12, .13 on the same ports, one configuration,
#             all advertising 127.0.0.10, proxy_protocol required
#   cluster   $KAFKA_BOOTSTRAP (host:port,...), or an in-memory 3-node
#             cluster (kproxy's embedded demo cluster) when unset
#
# Usage: deploy/haproxy/run.sh            run until Ctrl-C
#        deploy/haproxy/run.sh --smoke    kcat round trip through it, then stop
# Needs haproxy (apt-get install -y haproxy) and Go; kcat for --smoke.
# Environment: KPROXY_BIN (else built), BOOTSTRAP_PORT (9092),
# BROKER_PORT_BASE (9100), ADMIN_PORT (9644), LOG_LEVEL (info).
# The same templates drive test/e2e/replicas.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
balancer=127.0.0.10
replicas=(127.0.0.11 127.0.0.12 127.0.0.13)
bootstrap_port=${BOOTSTRAP_PORT:-9092}
broker_base=${BROKER_PORT_BASE:-9100}
admin_port=${ADMIN_PORT:-9644}
log_level=${LOG_LEVEL:-info}
nodes=3

command -v haproxy >/dev/null || { echo "haproxy is not installed: apt-get install -y haproxy" >&2; exit 1; }
work=$(mktemp -d -t kproxy-haproxy.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  echo "logs and configurations kept in $work"
}
trap cleanup EXIT

bin=${KPROXY_BIN:-}
if [ -z "$bin" ]; then
  bin=$work/kproxy
  (cd "$repo" && go build -o "$bin" ./cmd/kproxy)
fi

upstream=${KAFKA_BOOTSTRAP:-}
if [ -z "$upstream" ]; then
  # kproxy's embedded demo cluster; its log names the brokers' addresses.
  cat >"$work/cluster.yaml" <<YAML
upstream: {embedded: {brokers: $nodes, topics: [demo]}}
listeners: {bind_host: 127.0.0.1}
log: {level: warn, format: json}
YAML
  "$bin" --config "$work/cluster.yaml" >"$work/cluster.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do
    upstream=$(grep -o '"brokers":\[[^]]*\]' "$work/cluster.log" | head -1 | sed 's/"brokers":\[//; s/\]//; s/"//g') || true
    [ -n "$upstream" ] && break
    sleep 0.1
  done
  [ -n "$upstream" ] || { echo "embedded cluster did not start:" >&2; cat "$work/cluster.log" >&2; exit 1; }
fi
upstream_yaml=$(echo "$upstream" | sed 's/[^,]*/"&"/g; s/,/, /g')
echo "cluster: $upstream"

fill() { # template, then NAME=value pairs
  local out
  out=$(cat "$here/$1"); shift
  for kv in "$@"; do out=${out//@${kv%%=*}@/${kv#*=}}; done
  if grep -qE '@[A-Z0-9_]+@' <<<"$out"; then echo "unfilled placeholder in template" >&2; exit 1; fi
  printf '%s\n' "$out"
}

for i in "${!replicas[@]}"; do
  n=$((i + 1)) ip=${replicas[$i]}
  fill kproxy-replica.yaml.tmpl "UPSTREAM=$upstream_yaml" "BIND=$ip" "BALANCER=$balancer" \
    "BOOTSTRAP_PORT=$bootstrap_port" "BROKER_PORT_BASE=$broker_base" "ADMIN_PORT=$admin_port" \
    "LOG_LEVEL=$log_level" "AUDIT=$work/audit-$n.log" >"$work/kproxy-$n.yaml"
  "$bin" --config "$work/kproxy-$n.yaml" >"$work/kproxy-$n.log" 2>&1 &
  pids+=($!)
  echo "kproxy $n: $ip (pid $!), log $work/kproxy-$n.log, audit $work/audit-$n.log"
done
for ip in "${replicas[@]}"; do
  for _ in $(seq 200); do
    curl -fsS "http://$ip:$admin_port/readyz" >/dev/null 2>&1 && break
    sleep 0.1
  done
  curl -fsS "http://$ip:$admin_port/readyz" >/dev/null || { echo "kproxy on $ip not ready" >&2; exit 1; }
done

fill haproxy.cfg.tmpl "BALANCER=$balancer" "BOOTSTRAP_PORT=$bootstrap_port" \
  "BROKER_PORTS=$broker_base-$((broker_base + nodes - 1))" "ADMIN_PORT=$admin_port" \
  "REPLICA1=${replicas[0]}" "REPLICA2=${replicas[1]}" "REPLICA3=${replicas[2]}" >"$work/haproxy.cfg"
haproxy -db -f "$work/haproxy.cfg" >"$work/haproxy.log" 2>&1 &
pids+=($!)
sleep 1.5 # two health checks (rise 2, inter 500ms)
echo "haproxy: $balancer:$bootstrap_port and :$broker_base-$((broker_base + nodes - 1)) (pid $!), log $work/haproxy.log"

if [ "${1:-}" = "--smoke" ]; then
  seq -f 'smoke-%g' 100 | kcat -b "$balancer:$bootstrap_port" -P -t demo -X acks=all
  got=$(timeout 30 kcat -b "$balancer:$bootstrap_port" -G smoke demo -X auto.offset.reset=earliest -c 100 -q -f '%s\n' | sort -u | wc -l)
  echo "kcat: 100 produced, $got consumed with a group through HAProxy"
  grep -ho '"client":"[0-9.]*' "$work"/kproxy-*.log "$work"/audit-*.log | sort | uniq -c
  [ "$got" -eq 100 ]
  exit
fi
cat <<TXT

Try:  kcat -b $balancer:$bootstrap_port -L
      kill -KILL <pid of a kproxy>   # clients reconnect through the others
      kill -TERM <pid of a kproxy>   # drains: /readyz 503, in-flight answered
Ctrl-C stops everything.
TXT
wait
