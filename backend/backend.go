// Package backend defines where a run's services run and its trials are
// measured, as the orchestrator (package run) sees it: this machine
// (package local), or a Kubernetes cluster (package kube). A backend
// imports this package, never the orchestrator, and the orchestrator
// imports no backend: cli builds the one a run uses and hands it to
// run.Run.
package backend

import (
	"context"
	"time"

	"github.com/tollperf/toll/load"
	"github.com/tollperf/toll/plan"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/runid"
	"github.com/tollperf/toll/scenario"
)

// Backend is where a run's services run and its trials are measured: this
// machine (package local: processes and containers in toll's cgroups,
// package place) or a Kubernetes cluster (package kube). Above it
// everything is written once: the plan, the results directory and its
// manifest, the order of starts, trials and stops, interruption and the
// cleanup after it, progress, and writing every trial record.
//
// The orchestrator calls Adapt and Check before anything is created, Setup
// once before the first start, Start, Trial and Stop as the plan goes,
// and Close once at the end of every run.
type Backend interface {
	// Adapt returns s as this backend runs it, and a note for the
	// manifest when that changed it (a setting toll chose that only
	// holds elsewhere, replaced by one that holds here); s itself is
	// left as it is.
	Adapt(s *scenario.Scenario) (*scenario.Scenario, string)
	// Check refuses, before anything is created, what of s (as Adapt
	// returned it) this backend cannot run, saying why and what to do
	// instead.
	Check(s *scenario.Scenario, req Request) error
	// Setup prepares the backend for the run before its first start, and
	// may add to the manifest's layout and notes. Close undoes what it
	// did, also when it fails.
	Setup(ctx context.Context, run Run) error
	// Start starts a variant's services and returns once each is ready.
	// cpuLimit, when above 0, is a matrix step's CPU limit for each
	// service (scenario's matrix: cpus), in place of their own.
	Start(ctx context.Context, variant string, cpuLimit float64) error
	// Trial runs one planned trial of steady load against a started
	// variant and returns its record, unwritten, with the load
	// generator's result when it ran in toll's process (nil otherwise:
	// the record carries the totals and per-second histograms). An error
	// with a record is the trial's own (Interrupted and Error say why);
	// without one, no trial ran.
	Trial(ctx context.Context, t *plan.Trial) (*record.Trial, *load.Result, error)
	// Stop stops a variant's services, and then tells the orchestrator
	// what its telemetry sink had received (Events.Stopped).
	Stop(ctx context.Context, variant string) error
	// Close stops and removes everything the backend created for the
	// run, within a bound of its own. It is called once, at the end of
	// every run, also a cancelled or failed one and one whose Setup was
	// never called, with a context that is not cancelled.
	Close(ctx context.Context) error
	// RecordsFailedSetup reports whether a run that fails before its
	// first start still writes its manifest, with the error and what
	// Setup recorded: where what the backend created outlives toll's
	// process, and the manifest's layout is how it is found again (a
	// cluster's namespace and label).
	RecordsFailedSetup() bool
}

// Request is what a run asks of a backend beyond its scenario.
type Request struct {
	// Resume is set when the run continues an interrupted one in its
	// results directory.
	Resume bool
}

// Run is what a backend learns of the run it serves, at Setup.
type Run struct {
	// Scenario is the scenario being run, as Adapt returned it.
	Scenario *scenario.Scenario
	// ID labels everything the run creates.
	ID runid.ID
	// Dir is the results directory (logs are opened by Dir.OpenLog, named by
	// Dir.LogPath).
	Dir *record.Dir
	// Manifest is the run's manifest, written after Setup.
	Manifest *record.Manifest
	// Seed is the run's, from which random choices (Poisson arrivals)
	// are drawn.
	Seed int64
	// Events receives what the backend tells the orchestrator.
	Events Events
}

// Keep is how the orchestrator keeps a measured trial: it writes the
// record (and the load's latency log when res is there), counts the trial
// and says so. Its error is the trial's own when the trial was cut short.
type Keep func(tr *record.Trial, res *load.Result) error

// The workloads beyond steady load at one variant are each an interface of
// their own, which a backend implements when it can run them; the
// orchestrator refuses, before anything starts, a scenario whose workload
// its backend lacks.

// AtOnce is a Backend that runs the trials of several started variants at
// the same time, on one timeline: a duet (the baseline and a variant,
// mode: duet) or every variant together (mode: together).
type AtOnce interface {
	// TrialsAtOnce runs the sides' trials at once and hands each side's
	// record to keep as soon as that side has ended (the sides of a
	// sliced duet end a slice apart). Its error joins the sides'.
	TrialsAtOnce(ctx context.Context, sides []*plan.Trial, keep Keep) error
	// Reschedule loads fewer sides at once from the next trial on: s is
	// the run's scenario with the mode toll chose in the place of the one
	// Setup prepared (scenario.Lighten). It ends what the backend began
	// for the old mode beside the rounds, and returns the note of the
	// layout that Setup made for the old mode and the one that replaces
	// it (empty for none).
	Reschedule(s *scenario.Scenario) (replaced, note string)
}

// Startups is a Backend that runs start-up experiments: a trial is one
// cold start of a variant's services, which the trial starts and stops
// itself (the plan has no start and stop actions around it).
type Startups interface {
	// StartupTrial starts the trial's variant under the trial's CPU limit
	// (t.CPULimit), measures each service's start, stops the services
	// and returns the record, unwritten. A service that does not become
	// ready fails the trial (the record says why), not the run; the
	// record of an interrupted start says so (Interrupted). An error,
	// without a record, means no trial ran.
	StartupTrial(ctx context.Context, t *plan.Trial) (*record.Trial, error)
}

// Jobs is a Backend that runs job experiments: a trial is one run of the
// variant's job, a command that does a fixed amount of work, while the
// scenario's services (a broker) run throughout.
type Jobs interface {
	// JobTrial runs the variant's job once and returns the record,
	// unwritten. A job that fails (its exit status, a signal, its
	// timeout) is a failed trial, and one cut short says so
	// (Interrupted). An error, without a record, means no trial ran.
	JobTrial(ctx context.Context, t *plan.Trial) (*record.Trial, error)
}

// SinkCounts reads a variant's telemetry sink's counts, as of a moment
// after its services stopped, and that moment.
type SinkCounts func(ctx context.Context) (record.Telemetry, time.Time, error)
