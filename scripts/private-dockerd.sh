#!/usr/bin/env bash
# Starts (start DIR) or stops (stop DIR) a private Docker daemon for toll's
# Docker tests on a machine without one: Debian's docker.io and containerd,
# fetched with apt-get download and unpacked into DIR (no package is
# installed), run as root with their own data root, socket and containerd
# namespace, the cgroupfs driver toll needs, no iptables rules and a bridge
# on a private /24 (docker-proxy forwards published ports), so the host's
# network and its other engines are left as they were. Then:
#
#   export DOCKER_HOST=unix://DIR/docker.sock
#   go test ./cmd/toll -run 'TestContainersDocker|TestContainerPorts'
#
# stop kills the daemon (by its pid file) and removes its bridge; DIR can
# then be removed.
set -euo pipefail
cmd=${1:?usage: private-dockerd.sh start|stop DIR} dir=${2:?usage: private-dockerd.sh start|stop DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
bridge=toll-docker0
case $cmd in
start)
  if [ ! -x "$dir/root/usr/sbin/dockerd" ]; then
    (cd "$dir" && apt-get download docker.io containerd)
    for deb in "$dir"/*.deb; do dpkg -x "$deb" "$dir/root"; done
  fi
  if ! ip link show "$bridge" >/dev/null 2>&1; then
    ip link add "$bridge" type bridge
    ip addr add 172.31.254.1/24 dev "$bridge"
    ip link set "$bridge" up
  fi
  mkdir -p "$dir/data" "$dir/exec"
  PATH=$dir/root/usr/bin:$dir/root/usr/sbin:$PATH setsid dockerd \
    --data-root "$dir/data" --exec-root "$dir/exec" --pidfile "$dir/dockerd.pid" \
    -H "unix://$dir/docker.sock" --iptables=false --ip-forward=false --ip-masq=false \
    --bridge "$bridge" --exec-opt native.cgroupdriver=cgroupfs \
    --containerd-namespace toll-test --containerd-plugins-namespace toll-test-plugins \
    >"$dir/dockerd.log" 2>&1 </dev/null &
  for _ in $(seq 60); do
    if DOCKER_HOST=unix://$dir/docker.sock "$dir/root/usr/bin/docker" info >/dev/null 2>&1; then
      echo "dockerd answers: export DOCKER_HOST=unix://$dir/docker.sock"
      exit 0
    fi
    sleep 0.5
  done
  echo "dockerd did not answer in 30 s; its log:" >&2
  tail -20 "$dir/dockerd.log" >&2
  exit 1
  ;;
stop)
  if [ -f "$dir/dockerd.pid" ]; then
    kill "$(cat "$dir/dockerd.pid")" 2>/dev/null || true
    for _ in $(seq 40); do [ -f "$dir/dockerd.pid" ] || break; sleep 0.5; done
  fi
  ip link del "$bridge" 2>/dev/null || true
  # dockerd leaves its own network namespace bound under its exec root.
  umount "$dir/exec/netns/default" 2>/dev/null || true
  ;;
*)
  echo "usage: private-dockerd.sh start|stop DIR" >&2
  exit 2
  ;;
esac
