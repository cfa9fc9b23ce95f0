// Package report renders an analysed run (analyze.Summary) for people and
// programs: an aligned terminal table, Markdown (report.md) and JSON
// (summary.json). Every renderer works from the Summary alone, so
// `toll report DIR` can redo them from a results directory.
package report
