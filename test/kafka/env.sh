# shellcheck shell=bash
# Shared settings for fetch.sh, cluster.sh and tool.sh. Sourced, not run.
# Every value can be overridden from the environment; see README.md.

KAFKA_SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KAFKA_VERSION=${KAFKA_VERSION:-4.4.0}
KAFKA_CACHE=${KAFKA_CACHE:-${HOME:-/root}/.cache/kproxy-kafka}

if [[ -n ${JAVA:-} ]]; then :
elif [[ -n ${JAVA_HOME:-} && -x $JAVA_HOME/bin/java ]]; then JAVA=$JAVA_HOME/bin/java
else JAVA=java
fi

kafka_log() { printf '[kafka %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
kafka_die() { kafka_log "ERROR: $*"; exit 1; }

# kafka_libs: the directory of jars; fetches them first unless KAFKA_NO_FETCH=1.
kafka_libs() {
  local libs=$KAFKA_CACHE/libs
  if [[ ! -f $KAFKA_CACHE/.fetched ]] || [[ $(cat "$KAFKA_CACHE/.fetched") != "$KAFKA_VERSION "* ]]; then
    [[ ${KAFKA_NO_FETCH:-0} == 1 ]] && kafka_die "no Kafka $KAFKA_VERSION jars in $KAFKA_CACHE (run test/kafka/fetch.sh)"
    "$KAFKA_SCRIPTS/fetch.sh" "$KAFKA_CACHE" >&2 || kafka_die "fetch.sh failed"
  fi
  printf '%s\n' "$libs"
}

# Tool JVMs are short-lived: a small heap, the serial GC and C1 only start
# about twice as fast. Perf/verifiable tools get C2 (see tool.sh).
KAFKA_TOOL_HEAP_OPTS=${KAFKA_TOOL_HEAP_OPTS:--Xmx256m}
KAFKA_TOOL_OPTS=${KAFKA_TOOL_OPTS:-}

# kafka_tool_cmd CLASS ARGS...: sets the array KAFKA_CMD to the java command
# line that runs a Kafka command-line class, logging WARN and above to stderr.
kafka_tool_cmd() {
  local libs cls=$1 fast=${KAFKA_TOOL_FAST:-1}
  shift
  libs=$(kafka_libs)
  # shellcheck disable=SC2206
  KAFKA_CMD=("$JAVA" $KAFKA_TOOL_HEAP_OPTS -XX:+UseSerialGC -Xshare:auto -Djava.awt.headless=true
    "-Dlog4j2.configurationFile=$KAFKA_SCRIPTS/log4j2-tools.xml")
  [[ $fast == 1 ]] && KAFKA_CMD+=(-XX:TieredStopAtLevel=1)
  # shellcheck disable=SC2206
  KAFKA_CMD+=($KAFKA_TOOL_OPTS -cp "$libs/*" "$cls" "$@")
}

# kafka_tool_java CLASS ARGS...: runs it.
kafka_tool_java() {
  local -a KAFKA_CMD
  kafka_tool_cmd "$@"
  "${KAFKA_CMD[@]}" 8>&-
}
