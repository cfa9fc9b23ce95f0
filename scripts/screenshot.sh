#!/bin/sh
# screenshot.sh DIR: render DIR/report.html in headless Chromium and save its
# screenshot as DIR/report.png. Needs chromium (apt-get install -y chromium).
set -eu
if [ $# -ne 1 ]; then
	echo "usage: $0 RESULTS_DIR" >&2
	exit 2
fi
dir=$(cd "$1" && pwd)
page="$dir/report.html"
if [ ! -f "$page" ]; then
	echo "$0: no report.html in $dir" >&2
	exit 1
fi
bin=${CHROMIUM:-chromium}
if ! command -v "$bin" >/dev/null 2>&1; then
	echo "$0: $bin not found (apt-get install -y chromium, or set CHROMIUM)" >&2
	exit 1
fi
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
timeout 60 "$bin" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync \
	--user-data-dir="$profile" --enable-logging=stderr --v=0 \
	--screenshot="$dir/report.png" --window-size="${WINDOW_SIZE:-1280,2400}" \
	"file://$page" 2>"$profile/stderr" || {
	cat "$profile/stderr" >&2
	exit 1
}
if grep -E 'Uncaught|CONSOLE.*[Ee]rror' "$profile/stderr" >&2; then
	echo "$0: console errors while rendering $page" >&2
	exit 1
fi
echo "$dir/report.png"
