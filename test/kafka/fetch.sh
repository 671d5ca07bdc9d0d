#!/usr/bin/env bash
# fetch.sh [CACHE_DIR]
# Puts the jars of Apache Kafka $KAFKA_VERSION (broker, storage tool,
# command-line tools, log4j2 backend) into CACHE_DIR/libs using Maven and the
# dependency list in pom.xml beside this script. Idempotent: does nothing when
# CACHE_DIR already holds this version. Safe to run concurrently (flock).
#   CACHE_DIR  default ${KAFKA_CACHE:-$HOME/.cache/kproxy-kafka}
#   env: KAFKA_VERSION (4.4.0), MVN (mvn), MAVEN_OPTS/MVN_ARGS passed through
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"

cache=${1:-$KAFKA_CACHE}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
stamp=$cache/.fetched
pom=$KAFKA_SCRIPTS/pom.xml
want="$KAFKA_VERSION $(sha256sum "$pom" | cut -c1-16)"

exec 9>"$cache/.lock"
flock 9

if [[ -f $stamp && $(cat "$stamp") == "$want" && -d $cache/libs ]]; then
  kafka_log "Kafka $KAFKA_VERSION already in $cache/libs ($(ls "$cache/libs" | wc -l) jars)"
  exit 0
fi

command -v "${MVN:-mvn}" >/dev/null || kafka_die "mvn not found (apt-get install maven)"
kafka_log "fetching Kafka $KAFKA_VERSION jars with Maven into $cache/libs"
tmp=$cache/libs.tmp.$$
rm -rf "$tmp"
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
# Only copy-dependencies runs: nothing is built, nothing is written beside the pom.
# (Debian's mvn prints colour codes even with -B; the sed drops them.)
# shellcheck disable=SC2086
if ! "${MVN:-mvn}" -B -q -f "$pom" ${MVN_ARGS:-} \
  -Dkafka.version="$KAFKA_VERSION" \
  dependency:copy-dependencies \
  -DincludeScope=runtime -DoutputDirectory="$tmp" 2>&1 |
  sed 's/\x1b\[[0-9;]*m//g' | { grep -v '^[[:space:]]*$' || true; } >&2; then
  kafka_die "mvn dependency:copy-dependencies failed"
fi
[[ -f $tmp/kafka_2.13-$KAFKA_VERSION.jar && -f $tmp/kafka-tools-$KAFKA_VERSION.jar ]] ||
  kafka_die "Maven did not produce the Kafka $KAFKA_VERSION jars"
rm -rf "$cache/libs"
mv "$tmp" "$cache/libs"
printf '%s\n' "$want" >"$stamp"
kafka_log "fetched $(ls "$cache/libs" | wc -l) jars ($(du -sh "$cache/libs" | cut -f1)) in $(($(date +%s) - start))s"
