#!/usr/bin/env bash
# cluster.sh — a real Apache Kafka (KRaft) cluster on loopback for tests.
#
#   cluster.sh start            [DIR]   format (first time) + start all nodes, wait, print bootstrap
#   cluster.sh stop             [DIR]   clean SIGTERM shutdown of all nodes, wait
#   cluster.sh status           [DIR]   one line per node + quorum; exit 0 iff all nodes run, else 3
#   cluster.sh bootstrap        [DIR]   print the bootstrap list
#   cluster.sh wait             [DIR]   wait until every broker is registered and unfenced
#   cluster.sh restart-node N   [DIR]   stop node N cleanly, start it, wait until it has rejoined
#                                       (unfenced, no under-replicated partition), then give it
#                                       back its preferred leaderships
#   cluster.sh stop-node N      [DIR]   clean SIGTERM of node N only
#   cluster.sh kill-node N      [DIR]   SIGKILL node N (crash test; start-node brings it back)
#   cluster.sh start-node N     [DIR]   start node N, wait until it is unfenced
#   cluster.sh clean            [DIR]   SIGKILL all nodes, then delete DIR
#   cluster.sh env              [DIR]   print the SASL_SSL listener's settings as shell
#                                       assignments (bootstrap, CA file, users, IdP URLs)
#
# DIR defaults to $KAFKA_DIR or /tmp/kproxy-kafka. Progress goes to stderr;
# `start`, `wait` and `bootstrap` print only the bootstrap list on stdout, so
# BOOTSTRAP=$(cluster.sh start) works. The Java processes hold none of the
# caller's stdin/stdout/stderr, so a caller that reads this script's output to
# EOF (Go's exec.Cmd.Output) does not hang. Exit status non-zero on failure,
# with the failing node's log tail on stderr.
# Environment: see README.md (KAFKA_NODES, KAFKA_BROKER_PORT_BASE, ...).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
. "$(dirname "${BASH_SOURCE[0]}")/security.sh"

usage() { sed -n '2,25p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

cmd=${1:-}
[[ -n $cmd ]] || usage
shift
node_arg=
case $cmd in
  restart-node | stop-node | start-node | kill-node)
    node_arg=${1:-}
    [[ $node_arg =~ ^[0-9]+$ ]] || usage
    shift ;;
  start | stop | status | bootstrap | wait | clean | env) ;;
  -h | --help | help) usage ;;
  *) usage ;;
esac
DIR=${1:-${KAFKA_DIR:-/tmp/kproxy-kafka}}
if [[ ! -d $DIR ]]; then
  case $cmd in
    start) mkdir -p "$DIR" ;;
    stop | clean) kafka_log "no cluster in $DIR"; exit 0 ;;
    *) kafka_log "no cluster in $DIR"; exit 3 ;;
  esac
fi
DIR=$(cd "$DIR" && pwd)

# One cluster.sh at a time changes a cluster (concurrent test packages may all
# call `start`: the first starts it, the others wait and find it running).
# Nodes and tools are started with this descriptor closed.
case $cmd in
  status | bootstrap | wait | env) ;;
  *)
    exec 8>"$DIR/.lock"
    flock 8
    ;;
esac

START_TIMEOUT=${KAFKA_START_TIMEOUT:-120}
STOP_TIMEOUT=${KAFKA_STOP_TIMEOUT:-60}
LOG_LEVEL=${KAFKA_LOG_LEVEL:-INFO}
HEAP_OPTS=${KAFKA_HEAP_OPTS:--Xms128m -Xmx384m}
JVM_OPTS=${KAFKA_JVM_PERFORMANCE_OPTS:--XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -XX:MaxInlineLevel=15 -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true}

# --- the cluster's shape: recorded in DIR/cluster.env by the first start ---
state=$DIR/cluster.env
if [[ -f $state ]]; then
  # shellcheck disable=SC1090
  . "$state"
  for v in KAFKA_NODES KAFKA_BROKER_PORT_BASE KAFKA_CONTROLLER_PORT_BASE; do
    rec=REC_${v#KAFKA_}
    if [[ $cmd == start && -n ${!v:-} && ${!v} != "${!rec}" ]]; then
      kafka_log "warning: $v=${!v} ignored: $DIR was set up with ${!rec} (cluster.sh clean to change)"
    fi
  done
  NODES=$REC_NODES BPORT=$REC_BROKER_PORT_BASE CPORT=$REC_CONTROLLER_PORT_BASE CLUSTER_ID=$REC_CLUSTER_ID
else
  NODES=${KAFKA_NODES:-3}
  BPORT=${KAFKA_BROKER_PORT_BASE:-19092}
  CPORT=${KAFKA_CONTROLLER_PORT_BASE:-19192}
  CLUSTER_ID=${KAFKA_CLUSTER_ID:-}
fi
[[ $NODES =~ ^[1-9]$ ]] || kafka_die "KAFKA_NODES must be 1..9"
if [[ -n $node_arg ]] && ((node_arg < 1 || node_arg > NODES)); then
  kafka_die "no node $node_arg (nodes are 1..$NODES)"
fi
RF=$((NODES < 3 ? NODES : 3))
MIN_ISR=$((RF < 2 ? 1 : 2))

bport() { echo $((BPORT + $1 - 1)); }
cport() { echo $((CPORT + $1 - 1)); }
# The SASL_SSL listener (SCRAM-SHA-512 and OAUTHBEARER) of node N is 200
# above its PLAINTEXT one; the test identity provider is on BPORT + 300.
sport() { echo $((BPORT + 200 + $1 - 1)); }
IDP_PORT=$((BPORT + 300))
sasl_bootstrap() {
  local i out=
  for ((i = 1; i <= NODES; i++)); do out+="${out:+,}127.0.0.1:$(sport $i)"; done
  echo "$out"
}
bootstrap() {
  local i out=
  for ((i = 1; i <= NODES; i++)); do out+="${out:+,}127.0.0.1:$(bport $i)"; done
  echo "$out"
}
voters() {
  local i out=
  for ((i = 1; i <= NODES; i++)); do out+="${out:+,}$i@127.0.0.1:$(cport $i)"; done
  echo "$out"
}

# --- processes ---
ndir() { echo "$DIR/node$1"; }
marker() { echo "-Dkproxy.kafka.node=$(ndir "$1")"; }
alive() { # PID: running and not a zombie
  local s
  [[ -r /proc/$1/stat ]] || return 1
  s=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [[ -n $s && $s != Z ]]
}
node_pid() { # prints the pid of node N if it is running (pid file + cmdline check)
  local f pid
  f=$(ndir "$1")/kafka.pid
  [[ -f $f ]] || return 1
  pid=$(cat "$f")
  [[ $pid =~ ^[0-9]+$ ]] && alive "$pid" || return 1
  grep -qF -- "$(marker "$1") " <(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
  echo "$pid"
}
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

show_logs() { # NODE: this run's stdout and the end of this run's server.log
  local d off
  d=$(ndir "$1")
  off=$(cat "$d/logs/.offset" 2>/dev/null || echo 0)
  kafka_log "---- node $1: $d/logs/stdout.log and the end of server.log ----"
  tail -n 15 "$d/logs/stdout.log" >&2 2>/dev/null || true
  tail -c +$((off + 1)) "$d/logs/server.log" 2>/dev/null | grep -E '^\[[^]]*\] (ERROR|FATAL)' | tail -n 10 >&2 || true
  tail -c +$((off + 1)) "$d/logs/server.log" 2>/dev/null | tail -n 10 >&2 || true
}

write_config() {
  local i=$1 d
  d=$(ndir "$i")
  mkdir -p "$d/data" "$d/logs"
  cat >"$d/server.properties" <<EOF
# generated by test/kafka/cluster.sh — edits are overwritten on start
process.roles=broker,controller
node.id=$i
controller.quorum.voters=$(voters)
listeners=PLAINTEXT://127.0.0.1:$(bport "$i"),CONTROLLER://127.0.0.1:$(cport "$i"),SASL_SSL://127.0.0.1:$(sport "$i")
advertised.listeners=PLAINTEXT://127.0.0.1:$(bport "$i"),CONTROLLER://127.0.0.1:$(cport "$i"),SASL_SSL://127.0.0.1:$(sport "$i")
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
log.dirs=$d/data

num.network.threads=2
num.io.threads=4
num.recovery.threads.per.data.dir=1
background.threads=4

auto.create.topics.enable=false
default.replication.factor=$RF
min.insync.replicas=$MIN_ISR
num.partitions=1
offsets.topic.replication.factor=$RF
offsets.topic.num.partitions=${KAFKA_INTERNAL_PARTITIONS:-12}
transaction.state.log.replication.factor=$RF
transaction.state.log.min.isr=$MIN_ISR
transaction.state.log.num.partitions=${KAFKA_INTERNAL_PARTITIONS:-12}
share.coordinator.state.topic.replication.factor=$RF
share.coordinator.state.topic.min.isr=$MIN_ISR
share.coordinator.state.topic.num.partitions=${KAFKA_INTERNAL_PARTITIONS:-12}
group.initial.rebalance.delay.ms=${KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS:-0}
# group.coordinator.rebalance.protocols is deprecated in 4.x and defaults to
# every protocol (classic, consumer = KIP-848, streams, share); the share and
# streams protocols are switched on by the share.version / streams.version
# features that the storage format sets to their 4.4 defaults.
unclean.leader.election.enable=false
leader.imbalance.check.interval.seconds=30

# SASL_SSL: TLS with the test CA's node certificate (PEM), SCRAM-SHA-512
# users from the storage format, OAUTHBEARER tokens of the test identity
# provider checked by Kafka's own JWKS validator, and short sessions so that
# clients re-authenticate (KIP-368) within a test run.
listener.name.sasl_ssl.ssl.keystore.type=PEM
listener.name.sasl_ssl.ssl.keystore.location=$DIR/pki/node$i.pem
listener.name.sasl_ssl.ssl.truststore.type=PEM
listener.name.sasl_ssl.ssl.truststore.location=$DIR/pki/ca.pem
listener.name.sasl_ssl.sasl.enabled.mechanisms=SCRAM-SHA-512,OAUTHBEARER
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;
listener.name.sasl_ssl.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler
listener.name.sasl_ssl.connections.max.reauth.ms=${KAFKA_SASL_REAUTH_MS:-10000}
sasl.oauthbearer.jwks.endpoint.url=http://127.0.0.1:$IDP_PORT/jwks
sasl.oauthbearer.expected.issuer=http://127.0.0.1:$IDP_PORT
sasl.oauthbearer.expected.audience=kafka
EOF
  if [[ -n ${KAFKA_SERVER_PROPS:-} ]]; then
    printf '\n# KAFKA_SERVER_PROPS\n%s\n' "$KAFKA_SERVER_PROPS" >>"$d/server.properties"
  fi
}

format_node() { # formats node N's log dir unless already formatted
  local d
  d=$(ndir "$1")
  [[ -f $d/data/meta.properties ]] && return 0
  local -a scram=()
  local u
  for u in "${SCRAM_USERS[@]}"; do scram+=(--add-scram "SCRAM-SHA-512=[name=${u%%:*},password=${u#*:}]"); done
  kafka_tool_java kafka.tools.StorageTool format --ignore-formatted \
    -t "$CLUSTER_ID" -c "$d/server.properties" "${scram[@]}" >"$d/logs/format.log" 2>&1 || {
    cat "$d/logs/format.log" >&2
    kafka_die "formatting node $1 failed"
  }
}

launch_node() {
  local i=$1 d libs pid
  d=$(ndir "$i")
  libs=$(kafka_libs)
  [[ -f $d/logs/stdout.log ]] && mv -f "$d/logs/stdout.log" "$d/logs/stdout.log.1"
  # where this run's server.log lines begin (see wait_started)
  stat -c %s "$d/logs/server.log" 2>/dev/null >"$d/logs/.offset" || echo 0 >"$d/logs/.offset"
  # setsid: the node outlives the caller's process group (Ctrl-C, CI step);
  # no fd of the caller is inherited.
  # shellcheck disable=SC2086
  setsid "$JAVA" $HEAP_OPTS $JVM_OPTS ${KAFKA_OPTS:-} \
    "-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=http://127.0.0.1:$IDP_PORT/jwks" \
    "-Dkafka.logs.dir=$d/logs" "-Dkafka.root.loglevel=$LOG_LEVEL" \
    "-Dlog4j2.configurationFile=$KAFKA_SCRIPTS/log4j2-server.xml" \
    "$(marker "$i")" \
    -cp "$libs/*" kafka.Kafka "$d/server.properties" \
    </dev/null >"$d/logs/stdout.log" 2>&1 8>&- &
  pid=$!
  echo "$pid" >"$d/kafka.pid"
  # Until the forked shell has exec'd java, /proc/PID/cmdline lacks the marker
  # that node_pid looks for: wait for the exec so nobody takes the node for dead.
  for _ in $(seq 100); do
    node_pid "$i" >/dev/null && break
    alive "$pid" || break
    sleep 0.05
  done
  kafka_log "node $i started (pid $pid, broker 127.0.0.1:$(bport "$i"), controller 127.0.0.1:$(cport "$i"))"
}

deadline() { echo $(($(date +%s) + $1)); }
expired() { (($(date +%s) >= $1)); }

wait_listening() { # NODE DEADLINE
  local i=$1 dl=$2
  until port_open "$(bport "$i")"; do
    node_pid "$i" >/dev/null || { show_logs "$i"; kafka_die "node $i exited during startup"; }
    expired "$dl" && { show_logs "$i"; kafka_die "node $i: broker port $(bport "$i") not open after ${START_TIMEOUT}s"; }
    sleep 0.3
  done
}

started_logged() { # NODE: this run of the node logged "Kafka Server started"
  local d off size
  d=$(ndir "$1")
  off=$(cat "$d/logs/.offset" 2>/dev/null || echo 0)
  size=$(stat -c %s "$d/logs/server.log" 2>/dev/null || echo 0)
  ((size >= off)) || off=0 # the log rolled over
  # (not `tail | grep -q`: with pipefail, tail's SIGPIPE would fail the pipeline)
  grep -q 'Kafka Server started' <(tail -c +$((off + 1)) "$d/logs/server.log" 2>/dev/null)
}

wait_started() { # DEADLINE NODE...: cheap wait (no JVM) until the nodes say they have
  # started, i.e. their broker is unfenced. wait_registered then confirms over the wire.
  local dl=$1 i pending
  shift
  while :; do
    pending=
    for i in "$@"; do
      started_logged "$i" && continue
      node_pid "$i" >/dev/null || { show_logs "$i"; kafka_die "node $i exited during startup"; }
      pending+=" $i"
    done
    [[ -z $pending ]] && return 0
    expired "$dl" && return 0 # wait_registered reports
    sleep 0.3
  done
}

registered_ids() { # ids of the unfenced brokers the cluster's metadata lists
  kafka_tool_java org.apache.kafka.tools.BrokerApiVersionsCommand \
    --bootstrap-server "$(bootstrap)" 2>/dev/null |
    grep -oE '\(id: [0-9]+' | grep -oE '[0-9]+' | sort -un | tr '\n' ' ' || true
}

wait_registered() { # DEADLINE NODE... : wait until the listed brokers are unfenced
  local dl=$1 got i missing
  shift
  while :; do
    got=" $(registered_ids)"
    missing=
    for i in "$@"; do [[ $got == *" $i "* ]] || missing+=" $i"; done
    [[ -z $missing ]] && return 0
    for i in "$@"; do node_pid "$i" >/dev/null || { show_logs "$i"; kafka_die "node $i died"; }; done
    expired "$dl" && {
      for i in $missing; do show_logs "$i"; done
      kafka_die "brokers not registered/unfenced after ${START_TIMEOUT}s:$missing (have:${got})"
    }
    sleep 1
  done
}

in_sync() { # 0: every partition has its full ISR; 1: not (yet); 2: no partition at all
  local out
  out=$(kafka_tool_java org.apache.kafka.tools.TopicCommand --bootstrap-server "$(bootstrap)" \
    --describe 2>/dev/null) || return 1
  printf '%s\n' "$out" | awk '
    /Partition: [0-9]+/ {
      n++
      for (i = 1; i <= NF; i++) { if ($i == "Replicas:") r = $(i+1); if ($i == "Isr:") s = $(i+1) }
      if (split(r, a, ",") != split(s, b, ",")) bad++
    }
    END { exit n == 0 ? 2 : (bad ? 1 : 0) }'
}

wait_in_sync() { # DEADLINE NODE: until no partition is under-replicated (and so NODE,
  # which holds a replica of every partition when RF = nodes, has rejoined)
  local dl=$1 rc
  while :; do
    rc=0
    in_sync || rc=$?
    ((rc == 0)) && return 0
    ((rc == 2)) && { wait_registered "$dl" "$2"; return 0; } # no topics: just check registration
    expired "$dl" && kafka_die "partitions still under-replicated after ${START_TIMEOUT}s"
    sleep 1
  done
}

stop_node() { # NODE SIGNAL: returns 0 if it stopped, 1 if it had to be killed
  local i=$1 sig=${2:-TERM} pid dl
  pid=$(node_pid "$i") || { kafka_log "node $i not running"; rm -f "$(ndir "$i")/kafka.pid"; return 0; }
  kill -"$sig" "$pid" 2>/dev/null || true
  dl=$(deadline "$STOP_TIMEOUT")
  while alive "$pid"; do
    if expired "$dl"; then
      kafka_log "node $i (pid $pid) still up ${STOP_TIMEOUT}s after SIG$sig: SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      sleep 0.5
      rm -f "$(ndir "$i")/kafka.pid"
      return 1
    fi
    sleep 0.2
  done
  # A killed JVM's main thread can be a zombie while its other threads still
  # hold the listening sockets: wait for the ports to close too.
  for _ in $(seq 100); do
    port_open "$(bport "$i")" || port_open "$(cport "$i")" || break
    sleep 0.1
  done
  if port_open "$(bport "$i")" || port_open "$(cport "$i")"; then
    kafka_log "warning: node $i's ports are still open after it exited:"
    ss -ltnp "( sport = :$(bport "$i") or sport = :$(cport "$i") )" >&2 2>/dev/null || true
  fi
  rm -f "$(ndir "$i")/kafka.pid"
  kafka_log "node $i stopped (SIG$sig)"
}

start_nodes() { # NODE...: format, launch and wait until they listen
  local i dl
  for i in "$@"; do
    node_pid "$i" >/dev/null && continue
    for p in "$(bport "$i")" "$(cport "$i")"; do
      # a node that was just stopped may take a moment to let go of its port
      for _ in $(seq 50); do port_open "$p" || break; sleep 0.2; done
      if port_open "$p"; then
        ss -ltnp "sport = :$p" >&2 2>/dev/null || true
        kafka_die "port $p (node $i) is in use by another process (set KAFKA_BROKER_PORT_BASE / KAFKA_CONTROLLER_PORT_BASE, or cluster.sh clean the other cluster)"
      fi
    done
  done
  make_pki
  write_secrets
  start_idp # before the brokers: their OAUTHBEARER validator reads its JWKS at start
  local -a fmt=()
  for i in "$@"; do
    node_pid "$i" >/dev/null && continue
    write_config "$i"
    format_node "$i" &
    fmt+=($!)
  done
  for p in "${fmt[@]}"; do wait "$p" || exit 1; done
  for i in "$@"; do node_pid "$i" >/dev/null || launch_node "$i"; done
  dl=$(deadline "$START_TIMEOUT")
  for i in "$@"; do wait_listening "$i" "$dl"; done
  wait_started "$dl" "$@"
}

all_nodes() { seq 1 "$NODES"; }

case $cmd in
  start)
    t0=$(date +%s)
    kafka_libs >/dev/null
    jv=$("$JAVA" -version 2>&1 | awk -F'"' '/version/ && v == "" {v = $2} END {print v}')
    if ! [[ ${jv%%.*} =~ ^[0-9]+$ ]] || ((${jv%%.*} < 17)); then
      kafka_die "Kafka $KAFKA_VERSION needs Java 17 or newer; $JAVA is '${jv:-?}' (set JAVA or JAVA_HOME)"
    fi
    if [[ ! -f $state ]]; then
      if [[ -z $CLUSTER_ID ]]; then
        CLUSTER_ID=-
        while [[ $CLUSTER_ID == -* ]]; do
          CLUSTER_ID=$(head -c16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
        done
      fi
      printf 'REC_NODES=%s\nREC_BROKER_PORT_BASE=%s\nREC_CONTROLLER_PORT_BASE=%s\nREC_CLUSTER_ID=%s\n' \
        "$NODES" "$BPORT" "$CPORT" "$CLUSTER_ID" >"$state"
    fi
    # shellcheck disable=SC2046
    start_nodes $(all_nodes)
    # shellcheck disable=SC2046
    wait_registered "$(deadline "$START_TIMEOUT")" $(all_nodes)
    kafka_log "cluster $CLUSTER_ID up: $NODES nodes in $(($(date +%s) - t0))s; data and logs in $DIR"
    bootstrap
    ;;
  stop)
    # All nodes at once: each broker's controlled shutdown still finds a
    # controller quorum because no node's controller stops before its broker.
    pids=()
    for i in $(all_nodes); do
      (stop_node "$i" TERM) &
      pids+=($!)
    done
    rc=0
    for p in "${pids[@]}"; do wait "$p" || rc=1; done
    ((rc == 0)) || kafka_log "warning: some node needed SIGKILL"
    stop_idp
    ;;
  status)
    running=0
    for i in $(all_nodes); do
      if pid=$(node_pid "$i"); then
        running=$((running + 1))
        echo "node $i running pid $pid broker 127.0.0.1:$(bport "$i") controller 127.0.0.1:$(cport "$i")"
      else
        echo "node $i stopped broker 127.0.0.1:$(bport "$i") controller 127.0.0.1:$(cport "$i")"
      fi
    done
    echo "bootstrap $(bootstrap)"
    if ((running > 0)); then
      echo "registered brokers: $(registered_ids)"
      kafka_tool_java org.apache.kafka.tools.MetadataQuorumCommand --bootstrap-server "$(bootstrap)" \
        describe --status 2>/dev/null | grep -E 'LeaderId|HighWatermark|CurrentVoters|CurrentObservers' || true
    fi
    ((running == NODES)) || exit 3
    ;;
  bootstrap)
    bootstrap
    ;;
  env)
    print_security_env
    ;;
  wait)
    # shellcheck disable=SC2046
    wait_registered "$(deadline "$START_TIMEOUT")" $(all_nodes)
    bootstrap
    ;;
  stop-node)
    stop_node "$node_arg" TERM || true
    ;;
  kill-node)
    stop_node "$node_arg" KILL || true
    ;;
  start-node)
    t0=$(date +%s)
    start_nodes "$node_arg"
    wait_registered "$(deadline "$START_TIMEOUT")" "$node_arg"
    kafka_log "node $node_arg registered in $(($(date +%s) - t0))s"
    ;;
  restart-node)
    t0=$(date +%s)
    stop_node "$node_arg" TERM || true
    t1=$(date +%s)
    start_nodes "$node_arg" # returns once the node's log says it started (unfenced)
    t2=$(date +%s)
    dl=$(deadline "$START_TIMEOUT")
    if ((RF == NODES)); then
      wait_in_sync "$dl" "$node_arg"
    else
      wait_registered "$dl" "$node_arg"
      wait_in_sync "$dl" "$node_arg"
    fi
    t3=$(date +%s)
    # Give the restarted node its preferred leaderships back, so that a rolling
    # restart moves leaders again on the next node. "Already elected" is fine.
    kafka_tool_java org.apache.kafka.tools.LeaderElectionCommand --bootstrap-server "$(bootstrap)" \
      --election-type PREFERRED --all-topic-partitions >/dev/null 2>&1 || true
    kafka_log "node $node_arg restarted: stop $((t1 - t0))s, start $((t2 - t1))s, in sync $((t3 - t2))s, total $(($(date +%s) - t0))s"
    ;;
  clean)
    # The data is deleted anyway: no need for a graceful shutdown.
    for i in $(all_nodes); do stop_node "$i" KILL || true; done
    stop_idp
    rm -rf "$DIR"
    kafka_log "removed $DIR"
    ;;
esac
