#!/bin/sh
# screenshot.sh DIR [ID]: render DIR/report.html in headless Chromium and save
# its screenshot as DIR/report.png: the top of the page, WINDOW_SIZE
# (width,height in px; default 1280,2400) of it. Needs chromium
# (apt-get install -y chromium; or set CHROMIUM to its path).
#
# With ID, only the element of report.html with that id is drawn, at the top
# of the window, and the screenshot is saved as DIR/report-ID.png: everything
# else on the page is hidden (a style added to a copy of the page; the report
# is left as it is; headless Chromium's --screenshot does not scroll to a
# URL's #fragment, so that cannot pick a section). Each variant's differential flame graph is the element
# flame-<variant> (flame-<variant>-step<N> when the run profiled several load
# steps); the ids a page has are listed when ID is not one of them. Set
# WINDOW_SIZE's height to the element's, e.g.
#
#   WINDOW_SIZE=1280,420 scripts/screenshot.sh results/quickstart-... flame-otel
set -eu
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: $0 RESULTS_DIR [ELEMENT_ID]" >&2
	exit 2
fi
dir=$(cd "$1" && pwd)
page="$dir/report.html"
if [ ! -f "$page" ]; then
	echo "$0: no report.html in $dir" >&2
	exit 1
fi
id=${2:-}
out="$dir/report.png"
if [ -n "$id" ]; then
	case $id in
	*[!A-Za-z0-9._-]*)
		echo "$0: $id: an element id is letters, digits, '.', '_' and '-'" >&2
		exit 2
		;;
	esac
	if ! grep -q "id=\"$id\"" "$page"; then
		echo "$0: no element with id \"$id\" in $page; its ids:" >&2
		grep -o 'id="[^"]*"' "$page" | sed 's/^id="\(.*\)"$/  \1/' >&2
		exit 1
	fi
	out="$dir/report-$id.png"
fi
bin=${CHROMIUM:-chromium}
if ! command -v "$bin" >/dev/null 2>&1; then
	echo "$0: $bin not found (apt-get install -y chromium, or set CHROMIUM)" >&2
	exit 1
fi
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
if [ -n "$id" ]; then
	# Hide every element that is neither the one named, nor inside it, nor
	# one of its ancestors. The page is self-contained, so its copy renders
	# the same.
	sel="[id=\"$id\"]"
	sed "s|</head>|<style>body *:not(:has($sel)):not($sel):not($sel *){display:none !important}</style></head>|" \
		"$page" >"$profile/report.html"
	page="$profile/report.html"
	set -- --hide-scrollbars
else
	set --
fi
timeout 60 "$bin" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync \
	--user-data-dir="$profile/chromium" --enable-logging=stderr --v=0 \
	--screenshot="$out" --window-size="${WINDOW_SIZE:-1280,2400}" "$@" \
	"file://$page" 2>"$profile/stderr" || {
	cat "$profile/stderr" >&2
	exit 1
}
if grep -E 'Uncaught|CONSOLE.*[Ee]rror' "$profile/stderr" >&2; then
	echo "$0: console errors while rendering $page" >&2
	exit 1
fi
echo "$out"
