#!/usr/bin/env bash
# nginx as a sidecar: a master and one worker proxying 127.0.0.1:$1 to
# 127.0.0.1:$2 over keep-alive connections, no access log. nginx cannot read
# ports from its environment, so this writes its configuration into a
# temporary directory, runs nginx in the foreground and removes the directory
# when nginx exits (toll stops the service with SIGTERM to its group).
set -euo pipefail
listen=$1 upstream=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/toll-nginx.XXXXXX")
chmod 755 "$dir"
cat >"$dir/nginx.conf" <<CONF
worker_processes 1;
error_log stderr warn;
pid $dir/nginx.pid;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $dir/body;
    proxy_temp_path $dir/proxy;
    fastcgi_temp_path $dir/fastcgi;
    uwsgi_temp_path $dir/uwsgi;
    scgi_temp_path $dir/scgi;
    upstream upstream {
        server 127.0.0.1:$upstream;
        keepalive 64;
    }
    server {
        listen 127.0.0.1:$listen;
        location / {
            proxy_pass http://upstream;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
    }
}
CONF
nginx -e stderr -p "$dir" -c "$dir/nginx.conf" -g 'daemon off;' &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null || true' TERM INT
set +e
wait "$pid"; status=$?
while kill -0 "$pid" 2>/dev/null; do wait "$pid"; status=$?; done
rm -rf "$dir"
exit "$status"
