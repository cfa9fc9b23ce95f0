#!/usr/bin/env bash
# Starts a single-node Kafka broker in KRaft mode (no ZooKeeper) on
# 127.0.0.1:PORT, its controller on 127.0.0.1:CONTROLLER_PORT, with its log
# in DIR (formatted afresh), from the jars build.sh copied into target/lib.
# toll runs it as a scenario service: usage: broker.sh PORT CONTROLLER_PORT DIR
set -euo pipefail
cd "$(dirname "$0")"
port=$1 controller=$2 dir=$3
rm -rf "$dir"
mkdir -p "$dir"
cat >"$dir/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$controller
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$controller
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs=$dir/data
num.partitions=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
PROPS
java -cp 'target/lib/*' kafka.tools.StorageTool format -t "$(java -cp 'target/lib/*' kafka.tools.StorageTool random-uuid)" \
  -c "$dir/server.properties" >/dev/null
exec java -Xms512m -Xmx512m -cp 'target/lib/*' kafka.Kafka "$dir/server.properties"
