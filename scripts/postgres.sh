#!/usr/bin/env bash
# A throwaway PostgreSQL server for the history's tests, from Debian's
# postgresql package (scripts/install-test-deps.sh installs it): its data
# in /var/tmp/toll-pg, listening on 127.0.0.1:54329 only.
#   scripts/postgres.sh up     start it (creating it the first time)
#   scripts/postgres.sh env    print the export that points the tests at it
#   scripts/postgres.sh down   stop it and remove its data
set -euo pipefail
dir=/var/tmp/toll-pg
port=54329
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$bin" ] || { echo "postgres.sh: no PostgreSQL in /usr/lib/postgresql (apt-get install postgresql)" >&2; exit 1; }
# PostgreSQL refuses to run as root: as root, the server runs as the
# package's postgres user.
as=()
if [ "$(id -u)" -eq 0 ]; then as=(runuser -u postgres --); fi
case "${1:-}" in
up)
  if [ ! -s "$dir/PG_VERSION" ]; then
    mkdir -p "$dir"
    [ ${#as[@]} -eq 0 ] || chown postgres: "$dir"
    "${as[@]}" "$bin/initdb" -D "$dir" -U postgres --auth=trust -E UTF8 >/dev/null
  fi
  if ! "${as[@]}" "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
    "${as[@]}" "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off" start >/dev/null
  fi
  "${as[@]}" "$bin/psql" -h 127.0.0.1 -p $port -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'toll'" | grep -q 1 ||
    "${as[@]}" "$bin/createdb" -h 127.0.0.1 -p $port -U postgres toll
  echo "postgres.sh: up on 127.0.0.1:$port (database toll)"
  ;;
env)
  echo "export TOLL_TEST_POSTGRES='postgres://postgres@127.0.0.1:$port/toll?sslmode=disable'"
  ;;
down)
  if [ -s "$dir/PG_VERSION" ]; then
    "${as[@]}" "$bin/pg_ctl" -D "$dir" -m fast -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
  ;;
*)
  echo "usage: scripts/postgres.sh up|env|down" >&2; exit 2
  ;;
esac
