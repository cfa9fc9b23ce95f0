package torecord

import (
	"bufio"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/tollperf/toll/scenario"
)

// LogMetrics reads the figures ms ask for from a service's log: for each,
// the first capture group of its regular expression on the first line that
// matches, as a number. It returns nil when none matched (or ms is empty,
// or a regular expression does not compile, which validation prevents).
func LogMetrics(r io.Reader, ms []scenario.LogMetric) map[string]float64 {
	if len(ms) == 0 {
		return nil
	}
	res := make([]*regexp.Regexp, len(ms))
	for i, m := range ms {
		re, err := regexp.Compile(m.Regex) // validated with the scenario
		if err != nil {
			return nil
		}
		res[i] = re
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() && len(out) < len(ms) {
		line := sc.Text()
		for i, re := range res {
			if _, done := out[ms[i].Name]; done {
				continue
			}
			if m := re.FindStringSubmatch(line); len(m) > 1 {
				if x, err := strconv.ParseFloat(strings.TrimSpace(m[1]), 64); err == nil {
					out[ms[i].Name] = x
				}
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
