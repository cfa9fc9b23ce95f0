// Package stats holds the statistics toll's intervals and verdicts rest
// on, as pure functions of numbers: Student t and Welch intervals and
// their p-values, a percentile bootstrap, Holm's correction for many
// tests at once, a slope's test, and the estimate of how many more values
// an interval needs to reach a target width.
//
// It does no I/O and knows nothing of trials, costs or records (a test
// keeps it importing no other package of toll's), in the way benchstat's
// benchmath serves benchstat: analyze decides what the numbers are,
// stats says what they support.
package stats
