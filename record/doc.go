// Package record owns toll's on-disk layout: a results directory holds a
// copy of the scenario, manifest.json, one JSON file per trial (written as
// soon as the trial ends), service logs, and the reports rendered from them.
//
// Every file is written whole (a temporary file, then a rename), so a run
// that is interrupted or killed leaves only complete files: the trials it
// finished can always be read back and reported.
//
// The layout:
//
//	results/<scenario>-<UTC time>/
//	  scenario.yaml         the scenario as run
//	  manifest.json         toll, host, settings; schema_version
//	  trials/NNNN-VARIANT.json
//	  logs/VARIANT.SERVICE.N.log
//	  summary.json  report.md
//
// This package knows nothing of analysis: it stores raw series (cumulative
// counters, per-second histograms) that analysis derives every figure from.
package record

// SchemaVersion is the version of the manifest and trial files. It changes
// when a field changes meaning or is removed; new fields do not change it.
const SchemaVersion = 1
