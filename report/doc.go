// Package report renders an analysed run (analyze.Summary) for people and
// programs: an aligned terminal table, Markdown (report.md) and JSON
// (summary.json). Every renderer works from the Summary alone, so
// `toll report DIR` can redo them from a results directory.
//
// It computes nothing analyze can: a change's verdict is its Direction, a
// "± x" its HalfWidth (a test fails on arithmetic with a bound), and the
// words of each warning, verdict and gate finding come from one
// catalogue per language (warnings_en.go, WarningText; verdicts_en.go,
// DeltaVerdict, ChangeVerdict, GateFailureText).
package report
