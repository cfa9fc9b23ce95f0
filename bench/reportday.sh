#!/usr/bin/env bash
# A day's report: the time and peak memory of `toll report --from-summary`
# on a synthetic 24-hour window, 86,400 points in each of six per-second
# series per variant (CPU, RSS, heap, p50, p99, rate), for 2 and 3
# variants.
#
# Writes each results directory with the report package's test helper
# (TestWriteDaySummary: summary.json as toll writes it, 75 MB a variant),
# then renders it with GNU time and prints the elapsed time and the
# maximum resident set size. Takes about a minute.
#
# Usage: bench/reportday.sh [TOLL]     (default: toll built from this tree)
#   VARIANTS="2 3"   the variant counts to measure
#   SECONDS_PER_SERIES=86400   a shorter window, to try the script quickly
#   KEEP=1           keep the results directories (under $TMPDIR)
set -euo pipefail

cd "$(dirname "$0")/.."
[[ -x /usr/bin/time ]] || { echo "needs GNU time (/usr/bin/time): apt-get install time" >&2; exit 1; }
work=$(mktemp -d)
[[ -n ${KEEP:-} ]] || trap 'rm -rf "$work"' EXIT
toll=${1:-}
if [[ -z $toll ]]; then
	toll=$work/toll
	go build -o "$toll" ./cmd/toll
fi
echo "toll: $toll ($("$toll" version 2>/dev/null | head -1))"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %-14s %-10s %-14s\n' variants summary.json elapsed "peak RSS"
for v in ${VARIANTS:-2 3}; do
	dir=$work/day$v
	TOLL_DAY_SUMMARY=$dir TOLL_DAY_VARIANTS=$v TOLL_DAY_SECONDS=${SECONDS_PER_SERIES:-86400} go test ./report -run '^TestWriteDaySummary$' -count=1 >/dev/null
	size=$(stat -c %s "$dir/summary.json")
	# Exit 3 (a run that is not valid) still renders every report.
	/usr/bin/time -v -o "$work/time$v" "$toll" report --from-summary "$dir" >/dev/null || [[ $? == 3 ]]
	elapsed=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time$v")
	rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time$v")
	printf '%-8s %-14s %-10s %-14s\n' "$v" "$((size / 1000000)) MB" "$elapsed" "$((rss / 1024)) MiB"
done
