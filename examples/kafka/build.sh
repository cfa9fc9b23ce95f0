#!/usr/bin/env bash
# Builds the Kafka example: the producer/consumer job (target/toll-kafka-job.jar)
# and, in target/lib/, the broker (org.apache.kafka:kafka_2.13, KRaft) and
# kafka-clients with their dependencies, all from Maven Central. Fetches the
# OpenTelemetry Java agent as examples/java does. About 1 minute the first
# time (the downloads), seconds after.
set -euo pipefail
cd "$(dirname "$0")"
../java/fetch-agents.sh
mvn -q -B -Dstyle.color=never package
echo "built examples/kafka/target/toll-kafka-job.jar and target/lib/"
