#!/usr/bin/env bash
# Builds the Spring Boot reference service (target/toll-java-example.jar).
set -euo pipefail
cd "$(dirname "$0")"
mvn -q -B -DskipTests package
echo "built examples/java/target/toll-java-example.jar"
