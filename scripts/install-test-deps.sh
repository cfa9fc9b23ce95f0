#!/usr/bin/env bash
# Installs what some tests use beyond Go, from Debian's packages. Tests that
# need a missing one skip with the reason, so `go test ./...` works without
# this; CI runs it so that every test runs.
#   prometheus-pushgateway  report: a push lands in a real Pushgateway
#   prometheus              report: Prometheus scrapes metrics.txt and runs the Grafana dashboard's queries;
#                           its promtool checks metrics.txt (`promtool check metrics`)
#   chromium                report: report.html renders in a real browser
#   default-jdk-headless    JVM tests (javac, jstat), when no JDK is present
#   maven                   builds examples/java and fetches its agents, when missing
#   podman                  container tests (e2e/shapes, leftover): services as containers,
#                           cleanup of a killed run's containers
#   runc                    podman's runtime on cgroup v1 hosts, where crun (podman's
#                           first choice) fails; toll picks runc there when installed
#   haproxy                 examples/sidecar.yaml: the sidecar proxy (e2e/shapes TestSidecarProxy)
#   nginx                   examples/sidecar.yaml: the other sidecar proxy
#   bpftrace                examples/ebpf.yaml: the eBPF agent (e2e/shapes TestEBPFAgent), and
#                           examples/reproductions/kindling.yaml (TestReproductionKindling)
#   nodejs                  Node.js as a runtime toll reads (probe/node TestLive,
#                           e2e/sampling TestNodeRuntime), when no node is present
#   linux-perf              profile: true and toll run --profile sample stacks with perf
#                           (probe/profile TestPerfSamplesKnownFunction)
#   postgresql              history: the shared history in a real server (scripts/postgres.sh)
set -euo pipefail
pkgs=(prometheus-pushgateway prometheus chromium podman runc haproxy nginx bpftrace linux-perf postgresql)
command -v javac >/dev/null || pkgs+=(default-jdk-headless)
command -v mvn >/dev/null || pkgs+=(maven)
command -v node >/dev/null || pkgs+=(nodejs)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
# The tests start their own Prometheus and Pushgateway on free ports; the
# packages' services, which a systemd host starts on install, would hold
# the default ports and run after the tests, so they are stopped and disabled.
if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
  for unit in prometheus prometheus-pushgateway prometheus-node-exporter; do
    if systemctl list-unit-files "$unit.service" >/dev/null 2>&1; then
      $SUDO systemctl disable --now "$unit.service" >/dev/null 2>&1 || true
    fi
  done
fi
