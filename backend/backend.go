// Package backend defines where a run's services run and its trials are
// measured, as the orchestrator (package run) sees it: this machine
// (package local), or a Kubernetes cluster (package kube). A backend
// imports this package, never the orchestrator.
package backend

import (
	"context"
	"io"
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
type Backend interface {
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
	// Stop stops a variant's services.
	Stop(ctx context.Context, variant string) error
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

// Remote is a Backend that runs services away from this machine, such as a
// Kubernetes cluster. toll's own machine then only plans, records and
// analyses: no cgroups, pinning or sinks are set up here.
type Remote interface {
	Backend
	// Setup prepares the backend for the run before its first start, and
	// may add to the manifest's layout and notes.
	Setup(ctx context.Context, rr RemoteRun) error
	// Close removes everything the backend created for the run. It is
	// called once, at the end of every run, also a cancelled or failed
	// one, with a context that is not cancelled.
	Close(ctx context.Context) error
}

// SinkReader is a Remote backend whose telemetry sinks say what they had
// received once a variant's services stopped, which ends the telemetry
// cycle of the variant's last trial (telemetry_end), as a local run's
// in-process sinks do.
type SinkReader interface {
	// SinkCounts returns the variant's sink's counts, as of a moment
	// after its services stopped, and that moment.
	SinkCounts(ctx context.Context, variant string) (record.Telemetry, time.Time, error)
}

// RemoteRun is what a Remote backend learns of the run it serves.
type RemoteRun struct {
	// Scenario is the scenario being run.
	Scenario *scenario.Scenario
	// ID labels everything the run creates.
	ID runid.ID
	// Dir is the results directory (logs go to Dir.LogPath).
	Dir *record.Dir
	// Manifest is the run's manifest, written after Setup.
	Manifest *record.Manifest
	// Progress receives lines for the user.
	Progress io.Writer
}
