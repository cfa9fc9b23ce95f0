#!/usr/bin/env bash
# Builds the Spring Boot reference service (target/toll-java-example.jar) and
# runs its unit tests. Maven fetches what it lacks from Maven Central.
#
# Maven rewrites the jar in place, which breaks a JVM still running it (it
# reads classes from the jar as it needs them): don't build during a run.
set -euo pipefail
cd "$(dirname "$0")"
mvn -q -B -Dstyle.color=never package
echo "built examples/java/target/toll-java-example.jar"
