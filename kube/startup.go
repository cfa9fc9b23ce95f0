package kube

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollperf/toll/backend"
	"github.com/tollperf/toll/plan"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/scenario"
	"github.com/tollperf/toll/torecord"
	"github.com/tollperf/toll/variant"
)

var _ backend.Startups = (*Runner)(nil)

// StartupNote is the manifest's note on what a start-up experiment in a
// cluster measures, beside a local one.
const StartupNote = "start-up in a cluster: each start is a pod of its own; toll's probe container, started first in the pod, " +
	"times each service from its first process's start (/proc, to the 10 ms clock tick) to its port opening and its readiness " +
	"check passing (every 25 ms, inside the pod), and reads CPU and RSS at ready from the service's processes (/proc, not its " +
	"container's cgroup) and the JVM's start-up from its hsperfdata"

// StartLineWait is Runner.StartLineWait's default: the kubelet's readiness
// probe, which made the pod ready, passes after the probe's own checks,
// whose lines it prints at once.
const StartLineWait = 10 * time.Second

// StartupTrial runs one cold start of trial t's variant: it creates the
// variant's pod for this start (StartupPod: under the trial's CPU limit,
// with the probe timing every service's start), waits until it is ready,
// reads each service's start from the probe's lines and the figures asked
// for from its log, keeps the logs, and deletes the pod, waiting until it
// is gone. A pod that does not become ready fails the trial, not the run.
func (r *Runner) StartupTrial(ctx context.Context, t *plan.Trial) (*record.Trial, error) {
	v := r.b.variants[t.Variant]
	if !slices.Contains(r.rr.Manifest.Notes, StartupNote) {
		r.rr.Manifest.Notes = append(r.rr.Manifest.Notes, StartupNote)
	}
	r.starts[t.Variant]++
	pod := r.b.StartupPod(t, r.starts[t.Variant])
	tr := &record.Trial{Index: t.Index, Round: t.Round, Launch: t.Launch, Step: t.Step, Variant: t.Variant, Order: t.Order,
		Startup: &record.StartupRun{CPULimit: t.CPULimit}}
	tr.Start = time.Now()
	if _, err := r.Client.CoreV1().Pods(r.b.Namespace()).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("start %d (%s): create pod: %w", t.Index, t.Variant, err)
	}
	var ready time.Duration
	for _, svc := range v.Services {
		ready = max(ready, svc.Ready.Timeout.D())
	}
	p, err := r.waitPod(ctx, pod.Name, r.ScheduleTimeout+ready)
	tr.MeasureStart, tr.MeasureEnd = tr.Start, time.Now()
	if p != nil {
		r.placed(p, ComponentServices, t.Variant, t.Index)
		r.ranOn(t.Variant, p.Spec.NodeName)
		tr.Node = p.Spec.NodeName
	}
	var starts map[string]ServiceStart
	if err == nil {
		starts, err = r.startLines(ctx, pod.Name, v.Services)
	}
	logs, logErr := r.readLogs(ctx, t.Variant, pod.Name)
	for _, svc := range v.Services {
		tr.Services = append(tr.Services, record.ServiceRun{Name: svc.Name, Role: svc.Role, Measured: svc.Measure || svc.Role == "agent",
			Argv: svc.Argv, Image: r.b.image(svc), Container: pod.Name + "/" + objectName(svc.Name), Started: true,
			Log: "logs/" + r.logName(t.Variant, svc.Name)})
	}
	switch {
	case err != nil && ctx.Err() != nil:
		tr.Interrupted, tr.Error = true, "interrupted"
	case err != nil:
		tr.Startup.Failed, tr.Startup.Error = true, err.Error()
	default:
		tr.Startup.Services, err = serviceStarts(tr.Services, starts, logs, r.rr.Scenario.Startup)
		if err != nil {
			tr.Startup.Failed, tr.Startup.Error = true, fmt.Sprintf("pod %s: %v", pod.Name, err)
		}
		// The start ends when the last service was ready, as the probe saw
		// it (toll's wait for the pod looks once a Poll).
		var last time.Time
		for _, ss := range starts {
			if ss.Ready.After(last) {
				last = ss.Ready
			}
		}
		if last.After(tr.MeasureStart) {
			tr.MeasureEnd = last
		}
	}
	if derr := r.deletePod(context.WithoutCancel(ctx), pod.Name); derr != nil {
		logErr = errors.Join(logErr, derr)
	}
	if logErr != nil {
		r.rr.Manifest.Notes = append(r.rr.Manifest.Notes, fmt.Sprintf("start %d (%s): %v", t.Index, t.Variant, logErr))
	}
	return tr, nil
}

// startLines waits, up to r.StartLineWait, for the probe of pod to print the
// start of every service that has a readiness check, and returns them by
// service.
func (r *Runner) startLines(ctx context.Context, pod string, services []variant.Service) (map[string]ServiceStart, error) {
	want := 0
	for _, svc := range services {
		if svc.Ready.HTTP != "" || svc.Ready.TCP != "" {
			want++
		}
	}
	deadline := time.Now().Add(r.StartLineWait)
	for {
		out, err := r.Logs.Read(ctx, r.b.Namespace(), pod, ProbeContainer, time.Time{})
		if err != nil {
			return nil, err
		}
		got := parseStartLines(out)
		if len(got) >= want {
			return got, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("pod %s: ready, but toll's probe printed the start of %d of its %d services within %s", pod, len(got), want, r.StartLineWait)
		}
		if err := sleep(ctx, r.Poll); err != nil {
			return nil, err
		}
	}
}

// parseStartLines reads the probe's StartLines from its output, by
// service.
func parseStartLines(out []byte) map[string]ServiceStart {
	got := map[string]ServiceStart{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var sl StartLine
		if !bytes.Contains(sc.Bytes(), []byte(`"start":`)) || json.Unmarshal(sc.Bytes(), &sl) != nil || sl.Start.Service == "" {
			continue
		}
		got[sl.Start.Service] = sl.Start
	}
	return got
}

// serviceStarts turns the probe's starts into the trial's, in the order of
// runs (the variant's services): seconds from each service's launch, and
// the figures st.LogMetrics asks for, read from the service's log. A
// measured service whose start the probe did not time is the error.
func serviceStarts(runs []record.ServiceRun, starts map[string]ServiceStart, logs map[string][]byte, st *scenario.Startup) ([]record.ServiceStart, error) {
	var out []record.ServiceStart
	var errs []error
	for _, run := range runs {
		s, ok := starts[run.Name]
		ss := record.ServiceStart{Name: run.Name, Measured: run.Measured}
		if run.Measured && (!ok || s.Launched.IsZero()) {
			errs = append(errs, fmt.Errorf("toll's probe found no process of service %s to time its start from", run.Name))
		}
		if ok && !s.Launched.IsZero() {
			since := func(t time.Time) float64 {
				if t.IsZero() {
					return 0
				}
				return max(0, t.Sub(s.Launched).Seconds())
			}
			ss.ReadyS, ss.PortOpenS, ss.CPUS, ss.RSSBytes = since(s.Ready), since(s.PortOpen), s.CPU, s.RSS
			if !s.JVMInitDone.IsZero() {
				ss.JVM = &record.JVMStart{CreatedS: since(s.JVMCreated), InitDoneS: since(s.JVMInitDone), Classes: s.Classes}
			}
		}
		if st != nil {
			ss.LogMetrics = logMetrics(logs[run.Name], st.LogMetrics)
		}
		out = append(out, ss)
	}
	return out, errors.Join(errs...)
}

// logMetrics reads the figures ms ask for from a service's log: for each,
// the first capture group of its regular expression on the first line that
// matches, as a number.
func logMetrics(log []byte, ms []scenario.LogMetric) map[string]float64 {
	if len(log) == 0 {
		return nil
	}
	return torecord.LogMetrics(bytes.NewReader(log), ms)
}
