package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollperf/toll/backend"
	"github.com/tollperf/toll/plan"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/scenario"
)

var _ backend.Jobs = (*Runner)(nil)

// JobNote is the manifest's note on what a job experiment in a cluster
// measures, beside a local one.
const JobNote = "jobs in a cluster: each run of the job is a Kubernetes Job of its own, timed by `toll k8s job` in its container " +
	"from its fork to its exit; its CPU time and largest resident set are its process's and those it waited for (wait4's rusage), " +
	"not its container's cgroup, and no peak memory is read"

// JobTrial runs trial t's job once as a Kubernetes Job (WorkJob), waits
// for its pod to end, reads the job's timeline and costs from the last
// line of its log (JobLine) and the figures asked for from the rest, keeps
// the log, and deletes the Job. A job that fails (its status, a signal,
// its timeout, an image that cannot run) is a failed trial, not a failed
// run.
func (r *Runner) JobTrial(ctx context.Context, t *plan.Trial) (*record.Trial, error) {
	v := r.b.variants[t.Variant]
	s := r.rr.Scenario
	if !slices.Contains(r.rr.Manifest.Notes, JobNote) {
		r.rr.Manifest.Notes = append(r.rr.Manifest.Notes, JobNote)
	}
	logName := fmt.Sprintf("%s.job.%d.log", t.Variant, t.Index)
	jr := &record.JobRun{Argv: v.Job.Argv, Log: "logs/" + logName, Work: s.Job.Work, Per: s.Job.Per, Unit: s.Job.Unit}
	tr := &record.Trial{Index: t.Index, Round: t.Round, Launch: t.Launch, Step: t.Step, Variant: t.Variant, Order: t.Order,
		Exports: v.Exports, Job: jr}
	// Spans are counted per job when any variant exports, so that the
	// baseline's row reads 0 beside the agent's.
	counts := slices.ContainsFunc(s.Variants, func(v scenario.Variant) bool { return v.Exports })
	var before record.Telemetry // at the job's start: T 0
	if counts {
		c, _, err := r.SinkCounts(ctx, t.Variant)
		if err != nil {
			return nil, fmt.Errorf("job %d (%s): its sink: %w", t.Index, t.Variant, err)
		}
		before = c
	}
	job := r.b.WorkJob(t)
	created := time.Now()
	if _, err := r.Client.BatchV1().Jobs(r.b.Namespace()).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("job %d (%s): create its Kubernetes Job: %w", t.Index, t.Variant, err)
	}
	defer r.deleteJob(job.Name, t.Index)
	pod, waitErr := r.waitWork(ctx, t, s.Job.Timeout.D()+r.ScheduleTimeout)
	var log []byte
	if pod != "" {
		out, err := r.Logs.Read(context.WithoutCancel(ctx), r.b.Namespace(), pod, JobContainer, time.Time{})
		if err != nil {
			out = []byte("toll: this container's log could not be read: " + err.Error() + "\n")
		}
		log = out
	}
	if err := r.rr.Dir.WriteFile("logs/"+logName, log); err != nil {
		return nil, err
	}
	var jl JobLine
	lineErr := errors.New("no log")
	if pod != "" {
		lineErr = lastLine(log, &jl)
	}
	tr.Start, tr.MeasureStart, tr.MeasureEnd = created, created, time.Now()
	switch {
	case waitErr != nil && ctx.Err() != nil:
		tr.Interrupted, tr.Error = true, "interrupted"
	case lineErr != nil:
		jr.Failed, jr.Error = true, fmt.Sprintf("the job's pod printed no costs (%v)", lineErr)
		if waitErr != nil {
			jr.Error = waitErr.Error() + "; " + jr.Error
		}
	default:
		tr.Start, tr.MeasureStart, tr.MeasureEnd = jl.Start, jl.Start, jl.End
		jr.WallS = jl.End.Sub(jl.Start).Seconds()
		jr.UserS, jr.SystemS, jr.MaxRSSBytes, jr.ExitCode = jl.UserS, jl.SystemS, jl.MaxRSSBytes, jl.ExitCode
		if jl.Error == "interrupted" {
			tr.Interrupted, tr.Error = true, "interrupted"
		} else if jl.Error != "" {
			jr.Failed, jr.Error = true, jl.Error
		}
		jr.LogMetrics = logMetrics(log, s.Job.LogMetrics)
	}
	if counts && !tr.Interrupted {
		after, at, err := r.SinkCounts(context.WithoutCancel(ctx), t.Variant)
		if err != nil {
			return nil, fmt.Errorf("job %d (%s): its sink: %w", t.Index, t.Variant, err)
		}
		after.T = at.Sub(tr.Start).Seconds()
		tr.Telemetry = []record.Telemetry{before, after}
	}
	return tr, nil
}

// waitWork waits, up to timeout, for the pod of trial t's Job to end, and
// returns its name ("" when the Job never had one); a pod that cannot
// start (an image it may not pull) or a Job past its deadline is the
// error.
func (r *Runner) waitWork(ctx context.Context, t *plan.Trial, timeout time.Duration) (string, error) {
	ns := r.b.Namespace()
	sel := r.b.RunSelector() + "," + LabelTrial + "=" + fmt.Sprint(t.Index) + "," + LabelComponent + "=" + ComponentJob
	deadline := time.Now().Add(timeout)
	var name string
	placed := false
	for {
		pods, err := r.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return name, fmt.Errorf("job %d: its pod: %w", t.Index, err)
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			name = p.Name
			if !placed && p.Spec.NodeName != "" {
				r.placed(p, ComponentJob, t.Variant, t.Index)
				placed = true
			}
			if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				return name, nil
			}
			for _, cs := range p.Status.ContainerStatuses {
				if cs.Name == JobContainer && cs.State.Terminated != nil {
					return name, nil // its line is in its log
				}
			}
			if err := podFailed(p); err != nil {
				return name, err
			}
		}
		if time.Now().After(deadline) {
			return name, fmt.Errorf("job %d: its pod did not end within %s%s", t.Index, timeout, r.unscheduled(ctx, t.Index))
		}
		if err := sleep(ctx, r.Poll); err != nil {
			return name, err
		}
	}
}
