#!/usr/bin/env bash
# selftest.sh [DIR]
# End-to-end proof of this harness against a fresh cluster in DIR (default
# $KAFKA_DIR or /tmp/kproxy-kafka-selftest; ports from the usual env vars):
#   fetch -> start -> create a 6-partition RF-3 topic -> verifiable producer
#   (acks=-1) -> a second producer running through `restart-node 2` ->
#   verifiable consumers (classic and KIP-848 consumer protocol) read
#   everything -> verify.py: every acked record consumed -> stop.
# Prints timings and the verify.py summaries; exit 0 iff every check passed.
# The cluster is stopped (and DIR kept, for its logs) on success and failure.
set -euo pipefail
H=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DIR=${1:-${KAFKA_DIR:-/tmp/kproxy-kafka-selftest}}
OUT=$DIR/selftest
TOPIC=selftest
TIMEOUT=${SELFTEST_TIMEOUT:-180}
# Defaults chosen so the restart of node 2 happens while phase 2 is producing.
N1=${SELFTEST_MESSAGES:-10000}
N2=${SELFTEST_RESTART_MESSAGES:-20000}
RATE2=${SELFTEST_RESTART_RATE:-1000}

log() { printf '[selftest %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN {printf "%.1f", b - a}'; }
tool() { timeout "$TIMEOUT" "$H/tool.sh" "$@"; }
declare -A T

t=$(now)
"$H/fetch.sh"
T[fetch]=$(since "$t")

"$H/cluster.sh" clean "$DIR" 2>/dev/null || true
mkdir -p "$OUT"
trap 'rc=$?; "$H/cluster.sh" stop "$DIR" || true; ((rc == 0)) || log "FAILED (rc $rc); logs in $DIR/node*/logs, tool output in $OUT"' EXIT

t=$(now)
B=$("$H/cluster.sh" start "$DIR")
T[start]=$(since "$t")
log "bootstrap $B"

t=$(now)
tool kafka-topics --bootstrap-server "$B" --create --topic "$TOPIC" --partitions 6 --replication-factor 3
T[create_topic]=$(since "$t")
tool kafka-topics --bootstrap-server "$B" --describe --topic "$TOPIC"

log "phase 1: $N1 records, acks=-1"
t=$(now)
tool kafka-verifiable-producer --bootstrap-server "$B" --topic "$TOPIC" \
  --max-messages "$N1" --acks -1 >"$OUT/produce1.json" 2>"$OUT/produce1.err"
T[produce1]=$(since "$t")
tail -n 1 "$OUT/produce1.json" >&2

log "phase 2: $N2 records at $RATE2/s while node 2 restarts"
# The verifiable producer sets retries=0 unless told otherwise; with retries a
# leader change during the restart costs no send errors.
printf 'retries=2147483647\ndelivery.timeout.ms=120000\n' >"$OUT/producer-retries.properties"
t=$(now)
tool kafka-verifiable-producer --bootstrap-server "$B" --topic "$TOPIC" \
  --max-messages "$N2" --throughput "$RATE2" --acks -1 \
  --command-config "$OUT/producer-retries.properties" \
  >"$OUT/produce2.json" 2>"$OUT/produce2.err" &
ppid=$!
sleep 3
t2=$(now)
"$H/cluster.sh" restart-node 2 "$DIR"
T[restart_node]=$(since "$t2")
wait "$ppid"
T[produce2]=$(since "$t")
tail -n 1 "$OUT/produce2.json" >&2

# Consume exactly what the topic holds (it may hold a few records more than
# were acked, e.g. a send that timed out but was written).
total=$(tool kafka-get-offsets --bootstrap-server "$B" --topic "$TOPIC" --time latest |
  awk -F: '{s += $3} END {print s + 0}')
log "topic holds $total records"

rc=0
for proto in classic consumer; do
  log "consuming with group protocol $proto"
  t=$(now)
  tool kafka-verifiable-consumer --bootstrap-server "$B" --topic "$TOPIC" \
    --group-id "selftest-$proto" --group-protocol "$proto" --max-messages "$total" \
    >"$OUT/consume-$proto.json" 2>"$OUT/consume-$proto.err" || { log "consumer ($proto) failed"; rc=1; }
  T[consume_$proto]=$(since "$t")
  if sum=$("$H/verify.py" --producer "$OUT/produce1.json" "$OUT/produce2.json" \
    --consumer "$OUT/consume-$proto.json"); then
    echo "verify ($proto): $sum"
  else
    echo "verify ($proto) FAILED: $sum"
    rc=1
  fi
done

tool kafka-consumer-groups --bootstrap-server "$B" --describe --group selftest-consumer >&2 || rc=1
"$H/cluster.sh" status "$DIR" >&2 || rc=1

t=$(now)
"$H/cluster.sh" stop "$DIR"
T[stop]=$(since "$t")
trap - EXIT

for k in fetch start create_topic produce1 restart_node produce2 consume_classic consume_consumer stop; do
  printf 'time %-17s %6ss\n' "$k" "${T[$k]:-?}"
done
if ((rc == 0)); then echo "selftest: 1 passed, 0 failed"; else echo "selftest: 0 passed, 1 failed"; fi
exit "$rc"
