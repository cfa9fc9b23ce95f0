// Package analyze turns the raw trials of a run into the figures toll
// reports: one value per cost per trial over the analysis window, and for
// every variant the paired difference against the baseline with a 95%
// confidence interval and a verdict.
//
// The method, stated plainly:
//
//   - Each trial's window is its measured window less the scenario's trims.
//     Costs are computed over that window only: CPU from the cumulative CPU
//     counters interpolated at the window's edges, requests from the
//     load generator's per-second intervals, latency percentiles from the
//     merged per-second HdrHistograms.
//   - Trials are paired by round: in round r, variant V and the baseline ran
//     back to back under the same conditions. The per-round ratio
//     V_r / baseline_r cancels what drifted between rounds.
//   - The overhead is the geometric mean of those ratios, exp(mean(log r)) - 1,
//     with a Student t 95% interval on mean(log r) over the n rounds, mapped
//     back to percent. A percentile bootstrap of the same mean checks the
//     interval; disagreement is reported.
//   - The verdict is the estimate with its interval ("+3.1% ± 0.8%") when the
//     interval excludes zero, and "~" (no difference this run can resolve)
//     when it contains zero. With one round there is no interval: toll says so.
//   - Costs that can be zero (errors, spans) are compared by paired
//     differences rather than ratios.
//   - Latency percentiles are computed per trial and compared per round,
//     never pooled across trials.
//   - Trials that break the method's assumptions are flagged (see Flag) and
//     shown; they are left out of the comparison only when asked, except
//     trials cut short (interrupted), which are left out unless asked for:
//     their window is not the one planned.
//
// The arithmetic of intervals, tests and corrections is package stats';
// analyze decides what is compared and records each outcome as a typed
// value: a change's bounds, Direction, HalfWidth and Reading, a Warning
// or a Flag as a code with its arguments, a gate's findings, why a run is
// invalid or partial. Package report words and draws them: analyze
// formats no text but errors' (TestNoProse).
package analyze
