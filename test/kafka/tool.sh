#!/usr/bin/env bash
# tool.sh NAME [ARGS...]
# Runs one of Kafka's command-line tools by the name of its bin/ script
# (with or without .sh), e.g.
#   tool.sh kafka-topics --bootstrap-server 127.0.0.1:19092 --list
# NAME may also be a fully qualified main class, or a .java file that Java's
# source launcher compiles and runs against Kafka's jars. `tool.sh --list` prints the
# names and their classes. Logging: WARN and above to stderr (KAFKA_TOOL_LOG_LEVEL).
# JVM: KAFKA_TOOL_HEAP_OPTS (-Xmx256m), KAFKA_TOOL_OPTS (extra flags),
# KAFKA_TOOL_FAST=0|1 (C1-only JIT; default 1 for admin tools, 0 for load tools).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"

# name | main class | fast start (C1 only: admin tools) or full JIT (load tools)
TOOLS='
kafka-topics                     org.apache.kafka.tools.TopicCommand                            1
kafka-consumer-groups            org.apache.kafka.tools.consumer.group.ConsumerGroupCommand     1
kafka-share-groups               org.apache.kafka.tools.consumer.group.ShareGroupCommand        1
kafka-streams-groups             org.apache.kafka.tools.streams.StreamsGroupCommand             1
kafka-groups                     org.apache.kafka.tools.GroupsCommand                           1
kafka-console-producer           org.apache.kafka.tools.ConsoleProducer                         1
kafka-console-consumer           org.apache.kafka.tools.consumer.ConsoleConsumer                1
kafka-console-share-consumer     org.apache.kafka.tools.consumer.ConsoleShareConsumer           1
kafka-verifiable-producer        org.apache.kafka.tools.VerifiableProducer                      0
kafka-verifiable-consumer        org.apache.kafka.tools.VerifiableConsumer                      0
kafka-verifiable-share-consumer  org.apache.kafka.tools.VerifiableShareConsumer                 0
kafka-transactional-message-copier org.apache.kafka.tools.TransactionalMessageCopier            0
kafka-transactions               org.apache.kafka.tools.TransactionsCommand                     1
kafka-producer-perf-test         org.apache.kafka.tools.ProducerPerformance                     0
kafka-consumer-perf-test         org.apache.kafka.tools.ConsumerPerformance                     0
kafka-share-consumer-perf-test   org.apache.kafka.tools.ShareConsumerPerformance                0
kafka-e2e-latency                org.apache.kafka.tools.EndToEndLatency                         0
kafka-broker-api-versions        org.apache.kafka.tools.BrokerApiVersionsCommand                1
kafka-metadata-quorum            org.apache.kafka.tools.MetadataQuorumCommand                   1
kafka-configs                    org.apache.kafka.tools.ConfigCommand                           1
kafka-acls                       org.apache.kafka.tools.AclCommand                              1
kafka-features                   org.apache.kafka.tools.FeatureCommand                          1
kafka-cluster                    org.apache.kafka.tools.ClusterTool                             1
kafka-client-metrics             org.apache.kafka.tools.ClientMetricsCommand                    1
kafka-delegation-tokens          org.apache.kafka.tools.DelegationTokenCommand                  1
kafka-delete-records             org.apache.kafka.tools.DeleteRecordsCommand                    1
kafka-get-offsets                org.apache.kafka.tools.GetOffsetShell                          1
kafka-leader-election            org.apache.kafka.tools.LeaderElectionCommand                   1
kafka-log-dirs                   org.apache.kafka.tools.LogDirsCommand                          1
kafka-reassign-partitions        org.apache.kafka.tools.reassign.ReassignPartitionsCommand      1
kafka-replica-verification       org.apache.kafka.tools.ReplicaVerificationTool                 1
kafka-dump-log                   org.apache.kafka.tools.DumpLogSegments                         1
kafka-jmx                        org.apache.kafka.tools.JmxTool                                 1
kafka-storage                    kafka.tools.StorageTool                                        1
kafka-server-start               kafka.Kafka                                                    0
'

name=${1:-}
if [[ -z $name || $name == -h || $name == --help || $name == --list ]]; then
  sed -n '2,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  printf '%s\n' "$TOOLS" | awk 'NF {printf "  %-34s %s\n", $1, $2}'
  [[ -n $name ]] && exit 0 || exit 2
fi
shift
name=${name%.sh}
line=$(printf '%s\n' "$TOOLS" | awk -v n="$name" '$1 == n {print $2, $3}')
if [[ -n $line ]]; then
  cls=${line% *}
  fast=${line#* }
elif [[ $name == *.*.* ]]; then
  cls=$name
  fast=1
elif [[ $name == *.java ]]; then
  cls=$name
  fast=0
else
  kafka_die "unknown tool '$name' (tool.sh --list shows the names)"
fi
export KAFKA_TOOL_FAST=${KAFKA_TOOL_FAST:-$fast}
KAFKA_TOOL_OPTS="-Dkafka.tool.loglevel=${KAFKA_TOOL_LOG_LEVEL:-WARN} $KAFKA_TOOL_OPTS"
kafka_tool_cmd "$cls" "$@"
# exec: a signal to tool.sh (e.g. a test killing it) reaches the JVM.
exec "${KAFKA_CMD[@]}"
