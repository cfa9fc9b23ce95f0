package kube

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tollperf/toll/backend"
	"github.com/tollperf/toll/load"
	"github.com/tollperf/toll/plan"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/scenario"
	"github.com/tollperf/toll/variant"
)

// Logs reads what a container printed since a time (zero: all of it).
type Logs interface {
	Read(ctx context.Context, namespace, pod, container string, since time.Time) ([]byte, error)
}

// APILogs reads containers' logs through the Kubernetes API (pods/log).
type APILogs struct{ Client kubernetes.Interface }

// Read returns the container's log.
func (a APILogs) Read(ctx context.Context, namespace, pod, container string, since time.Time) ([]byte, error) {
	opts := &corev1.PodLogOptions{Container: container}
	if !since.IsZero() {
		t := metav1.NewTime(since)
		opts.SinceTime = &t
	}
	b, err := a.Client.CoreV1().Pods(namespace).GetLogs(pod, opts).DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("logs of %s/%s: %w", pod, container, err)
	}
	return b, nil
}

// Runner runs a scenario's variants in a Kubernetes cluster: the
// backend.Backend of `toll run --kubernetes`. It creates the objects
// Builder makes, waits for them through the API, reads the probe's, the
// load's and the sink's output back from their logs into trial records,
// and deletes every object of the run in Close.
type Runner struct {
	// Client is the cluster's API.
	Client kubernetes.Interface
	// Logs reads containers' output; nil reads pod logs through Client.
	Logs Logs
	// Poll is how often the runner looks at what it waits on (default 1s).
	Poll time.Duration
	// Host is LabelHost's value, the machine of toll's CLI (default its
	// host name), with which GC tells whether a run still lives.
	Host string
	// ScheduleTimeout bounds the wait for a pod to be scheduled and its
	// images pulled, on top of its services' readiness timeouts (default
	// 5m).
	ScheduleTimeout time.Duration
	// LoadStartDelay is how far ahead the several pods of a load Job are
	// told to start together (default LoadStartDelay).
	LoadStartDelay time.Duration
	// StartLineWait bounds the wait for the probe's lines on a start once
	// its pod is ready (default StartLineWait).
	StartLineWait time.Duration

	b      *Builder
	rr     backend.Run
	starts map[string]int
	pods   map[string]string // running variant -> its pod
	fresh  map[string]bool   // no trial since the variant's pod started
	nodes  map[string]string // running variant -> its pod's node
	// startup holds, by running variant and service, the seconds from the
	// service's launch to its readiness in the variant's current pod.
	startup map[string]map[string]float64
}

var (
	_ backend.Backend  = (*Runner)(nil)
	_ backend.Startups = (*Runner)(nil)
	_ backend.Jobs     = (*Runner)(nil)
)

// Setup resolves the scenario for the cluster, creates each variant's
// sink and Services and waits for the sinks.
func (r *Runner) Setup(ctx context.Context, rr backend.Run) error {
	if r.Poll == 0 {
		r.Poll = time.Second
	}
	if r.ScheduleTimeout == 0 {
		r.ScheduleTimeout = 5 * time.Minute
	}
	if r.LoadStartDelay == 0 {
		r.LoadStartDelay = LoadStartDelay
	}
	if r.StartLineWait == 0 {
		r.StartLineWait = StartLineWait
	}
	if r.Logs == nil {
		r.Logs = APILogs{Client: r.Client}
	}
	if r.Host == "" {
		r.Host, _ = os.Hostname()
	}
	b, err := NewBuilder(rr.Scenario, RunLabel(rr.ID), r.Host)
	if err != nil {
		return err
	}
	r.b, r.rr = b, rr
	r.starts, r.pods, r.fresh, r.nodes = map[string]int{}, map[string]string{}, map[string]bool{}, map[string]string{}
	r.startup = map[string]map[string]float64{}
	m := rr.Manifest
	m.Layout.Place = "kubernetes"
	m.Layout.Cgroup = "none"
	m.Layout.CgroupNote = "in a cluster, toll's probe container reads each service's processes from /proc inside its pod"
	m.Layout.Kubernetes = &record.KubernetesLayout{Namespace: b.Namespace(), Placement: b.k.Placement, LoadPlacement: b.LoadPlacement(),
		Label: LabelRun + "=" + b.run, Nodes: map[string]record.NodeSet{}}
	for _, v := range rr.Scenario.Variants {
		if _, err := r.Client.CoreV1().Pods(b.Namespace()).Create(ctx, b.SinkPod(v.Name), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("variant %s: create its sink: %w", v.Name, err)
		}
		svcs := []*corev1.Service{b.SinkService(v.Name)}
		if rr.Scenario.Workload() == scenario.WorkloadLoad {
			svcs = append(svcs, b.Service(v.Name))
		}
		for _, svc := range svcs {
			if _, err := r.Client.CoreV1().Services(b.Namespace()).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("variant %s: create Service %s: %w", v.Name, svc.Name, err)
			}
		}
	}
	for _, v := range rr.Scenario.Variants {
		p, err := r.waitPod(ctx, b.SinkName(v.Name), r.ScheduleTimeout)
		if err != nil {
			return fmt.Errorf("variant %s: its sink: %w", v.Name, err)
		}
		r.placed(p, ComponentSink, v.Name, 0)
	}
	return nil
}

// Start creates the pod of the variant's next start and waits until it
// is ready: every service's readiness check passes. A matrix's cpuLimit is
// refused before the run (Check), so it is always 0 here.
func (r *Runner) Start(ctx context.Context, variant string, cpuLimit float64) error {
	if cpuLimit > 0 {
		return fmt.Errorf("variant %s: a matrix CPU limit (%g) runs on this machine only", variant, cpuLimit)
	}
	if len(r.b.variants[variant].Services) == 0 {
		return nil // a job experiment's variant without services: no pod
	}
	r.starts[variant]++
	pod := r.b.Pod(variant, r.starts[variant])
	if _, err := r.Client.CoreV1().Pods(r.b.Namespace()).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("variant %s: create pod: %w", variant, err)
	}
	r.pods[variant], r.fresh[variant] = pod.Name, true
	var ready time.Duration
	for _, svc := range r.b.variants[variant].Services {
		ready = max(ready, svc.Ready.Timeout.D())
	}
	p, err := r.waitPod(ctx, pod.Name, r.ScheduleTimeout+ready)
	if err != nil {
		if kerr := r.keepLogs(ctx, variant, pod.Name); kerr == nil {
			return fmt.Errorf("variant %s: %w (its services' logs are in %s)", variant, err, r.rr.Dir.LogPath(""))
		}
		return fmt.Errorf("variant %s: %w", variant, err)
	}
	r.ranOn(variant, p.Spec.NodeName)
	r.placed(p, ComponentServices, variant, 0)
	r.startup[variant] = nil
	starts, err := r.startLines(ctx, pod.Name, r.b.variants[variant].Services)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		// The services serve: the run goes on, without their start-up.
		r.rr.Manifest.Notes = append(r.rr.Manifest.Notes, fmt.Sprintf("variant %s, start %d: no start-up recorded: %v", variant, r.starts[variant], err))
		return nil
	}
	r.startup[variant] = map[string]float64{}
	for name, st := range starts {
		if !st.Launched.IsZero() && !st.Ready.Before(st.Launched) {
			r.startup[variant][name] = st.Ready.Sub(st.Launched).Seconds()
		}
	}
	return nil
}

// ranOn records that the variant's services (its current pod) run on
// node: the trials that follow name it, the manifest's set of the
// variant's nodes holds it, and once a variant has run on more than one
// node a note of the manifest says so, since its trials then compare
// across nodes.
func (r *Runner) ranOn(variant, node string) {
	r.nodes[variant] = node
	k := r.rr.Manifest.Layout.Kubernetes
	set := k.Nodes[variant]
	if !set.Add(node) {
		return
	}
	k.Nodes[variant] = set
	if len(set) < 2 {
		return
	}
	prefix := fmt.Sprintf("variant %s's services ran on ", variant)
	note := prefix + fmt.Sprintf("%d nodes (%s): the scheduler put its starts on different nodes, and each trial's file names its node", len(set), strings.Join(set, ", "))
	m := r.rr.Manifest
	if i := slices.IndexFunc(m.Notes, func(n string) bool { return strings.HasPrefix(n, prefix) }); i >= 0 {
		m.Notes[i] = note
		return
	}
	m.Notes = append(m.Notes, note)
}

// placed records in the manifest the node pod p of the run was scheduled
// on, so that the results say where each part of the run ran.
func (r *Runner) placed(p *corev1.Pod, component, variant string, trial int) {
	k := r.rr.Manifest.Layout.Kubernetes
	k.Pods = append(k.Pods, record.KubernetesPod{Name: p.Name, Component: component, Variant: variant, Trial: trial, Node: p.Spec.NodeName})
}

// waitPod waits until pod name is ready, and fails when it ends or one of
// its containers cannot start.
func (r *Runner) waitPod(ctx context.Context, name string, timeout time.Duration) (*corev1.Pod, error) {
	deadline := time.Now().Add(timeout)
	for {
		p, err := r.Client.CoreV1().Pods(r.b.Namespace()).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("pod %s: %w", name, err)
		}
		if err := podFailed(p); err != nil {
			return nil, err
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				return p, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("pod %s: not ready after %s (phase %s)", name, timeout, p.Status.Phase)
		}
		if err := sleep(ctx, r.Poll); err != nil {
			return nil, err
		}
	}
}

// podFailed says why a pod will never serve: it ended, or a container
// cannot start (an init container that ran to success is done, not
// failed).
func podFailed(p *corev1.Pod) error {
	var why []string
	inits := len(p.Status.InitContainerStatuses)
	for i, cs := range slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses) {
		if t := cs.State.Terminated; t != nil && (i >= inits || t.ExitCode != 0) {
			why = append(why, fmt.Sprintf("container %s exited (%s, code %d) %s", cs.Name, t.Reason, t.ExitCode, strings.TrimSpace(t.Message)))
		}
		if w := cs.State.Waiting; w != nil && slices.Contains([]string{"ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName", "CreateContainerConfigError", "CreateContainerError", "CrashLoopBackOff"}, w.Reason) {
			why = append(why, fmt.Sprintf("container %s: %s: %s", cs.Name, w.Reason, w.Message))
		}
	}
	if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded || len(why) > 0 {
		return fmt.Errorf("pod %s: %s: %s", p.Name, p.Status.Phase, strings.Join(why, "; "))
	}
	return nil
}

// Trial runs trial t's load Job against the variant's pod, waits for it
// to end and returns the trial read back from the Job's, the probe's and
// the sink's output. The Job and its pod are deleted before it returns.
func (r *Runner) Trial(ctx context.Context, t *plan.Trial) (*record.Trial, *load.Result, error) {
	pod, ok := r.pods[t.Variant]
	if !ok {
		return nil, nil, fmt.Errorf("trial %d: variant %s is not running", t.Index, t.Variant)
	}
	ns := r.b.Namespace()
	var notBefore time.Time
	if r.b.LoadPods() > 1 {
		notBefore = time.Now().Add(r.LoadStartDelay)
	}
	fresh := r.fresh[t.Variant]
	job := r.b.Job(t, notBefore, fresh)
	if _, err := r.Client.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		return nil, nil, fmt.Errorf("trial %d: create load Job: %w", t.Index, err)
	}
	defer r.deleteJob(job.Name, t.Index)
	loadPods, waitErr := r.waitJob(ctx, job.Name, t.Index, t.Variant, pod, fresh)
	if len(loadPods) == 0 {
		return nil, nil, fmt.Errorf("trial %d (%s, round %d): %w", t.Index, t.Variant, t.Round, waitErr)
	}
	var lines []LoadLine
	for _, lp := range loadPods {
		out, err := r.Logs.Read(ctx, ns, lp, LoadContainer, time.Time{})
		if err != nil {
			return nil, nil, fmt.Errorf("trial %d: %w", t.Index, err)
		}
		var ll LoadLine
		if err := lastLine(out, &ll); err != nil {
			return nil, nil, fmt.Errorf("trial %d: the output of load pod %s: %w", t.Index, lp, err)
		}
		lines = append(lines, ll)
	}
	ll, err := mergeLoad(lines)
	if err != nil {
		return nil, nil, fmt.Errorf("trial %d: %w", t.Index, err)
	}
	v := r.b.variants[t.Variant]
	s := r.rr.Scenario
	tr := &record.Trial{Index: t.Index, Round: t.Round, Launch: t.Launch, Step: t.Step, Variant: t.Variant, Order: t.Order, Pair: t.Pair,
		TargetRate: t.Rate, TargetUsers: t.Users, PlannedS: s.Load.Duration.D().Seconds(),
		Start: ll.Start, MeasureStart: ll.MeasureStart, MeasureEnd: ll.MeasureEnd, Exports: v.Exports,
		Target: r.b.Target(t.Variant), Load: ll.Load, Intervals: ll.Intervals, Node: r.nodes[t.Variant]}
	if fresh {
		tr.VariantWarmupS = r.b.VariantWarmup().Seconds()
	}
	if tr.MeasureEnd.Before(tr.MeasureStart) {
		tr.MeasureEnd = tr.MeasureStart
	}
	for _, svc := range v.Services {
		sr := record.ServiceRun{Name: svc.Name, Role: svc.Role, Measured: svc.Measure || svc.Role == "agent",
			Argv: svc.Argv, Image: r.b.image(svc), Container: pod + "/" + objectName(svc.Name), Log: "logs/" + r.logName(t.Variant, svc.Name)}
		if fresh {
			// The start belongs to the first trial after it, with the time
			// from launch to ready toll's probe saw; a start it could not
			// time is not claimed (the manifest's notes say why).
			s, ok := r.startup[t.Variant][svc.Name]
			sr.Started, sr.StartupS = ok, s
		}
		tr.Services = append(tr.Services, sr)
	}
	r.fresh[t.Variant] = false
	margin := s.Sample.D() + time.Second
	probeOut, err := r.Logs.Read(ctx, ns, pod, ProbeContainer, ll.Start.Add(-margin))
	if err != nil {
		return nil, nil, fmt.Errorf("trial %d: %w", t.Index, err)
	}
	tr.Samples = samples(probeOut, v.Services, ll.Start.Add(-margin), ll.MeasureEnd.Add(margin), ll.MeasureStart)
	sinkOut, err := r.Logs.Read(ctx, ns, r.b.SinkName(t.Variant), SinkContainer, ll.Start.Add(-margin))
	if err != nil {
		return nil, nil, fmt.Errorf("trial %d: %w", t.Index, err)
	}
	tr.Telemetry = telemetry(sinkOut, ll.Start.Add(-margin), ll.MeasureEnd.Add(margin), ll.MeasureStart)
	switch {
	case waitErr != nil:
		tr.Interrupted, tr.Error = true, waitErr.Error()
	case ll.Error != "":
		tr.Interrupted, tr.Error = true, ll.Error
	}
	if tr.Interrupted {
		return tr, nil, fmt.Errorf("trial %d (%s, round %d): %s", t.Index, t.Variant, t.Round, tr.Error)
	}
	return tr, nil, nil
}

// waitJob waits for the load Job of trial index to end and returns its
// pods; a Job that failed, or a variant pod that ended meanwhile, is the
// error, returned with the Job's pods when it has them.
func (r *Runner) waitJob(ctx context.Context, job string, index int, variant, variantPod string, fresh bool) ([]string, error) {
	ns := r.b.Namespace()
	l := r.rr.Scenario.Load
	limit := l.Warmup.D() + l.Duration.D() + l.Timeout.D() + r.ScheduleTimeout + r.LoadStartDelay
	if fresh {
		limit += r.b.VariantWarmup()
	}
	deadline := time.Now().Add(limit)
	for {
		j, err := r.Client.BatchV1().Jobs(ns).Get(ctx, job, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("load Job %s: %w", job, err)
		}
		var ended error
		switch {
		case int(j.Status.Succeeded) >= r.b.LoadPods():
		case j.Status.Failed > 0:
			ended = fmt.Errorf("load Job %s failed", job)
		default:
			if p, err := r.Client.CoreV1().Pods(ns).Get(ctx, variantPod, metav1.GetOptions{}); err != nil {
				return nil, fmt.Errorf("pod %s: %w", variantPod, err)
			} else if err := podFailed(p); err != nil {
				return nil, fmt.Errorf("during the trial, %w", err)
			}
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("load Job %s: not done after %s%s", job, limit, r.unscheduled(ctx, index))
			}
			if err := sleep(ctx, r.Poll); err != nil {
				return nil, err
			}
			continue
		}
		pods, err := r.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: r.b.RunSelector() + "," + LabelTrial + "=" + fmt.Sprint(index)})
		if err != nil {
			return nil, fmt.Errorf("load Job %s: its pods: %w", job, err)
		}
		var names []string
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodSucceeded || ended != nil {
				names = append(names, p.Name)
			}
			if p.Spec.NodeName != "" {
				r.placed(&p, ComponentLoad, variant, index)
			}
		}
		if ended == nil && len(names) < r.b.LoadPods() {
			return nil, fmt.Errorf("load Job %s: %d of its %d pods succeeded", job, len(names), r.b.LoadPods())
		}
		if len(names) == 0 {
			return nil, errors.Join(ended, fmt.Errorf("load Job %s: no pod", job))
		}
		return names, ended
	}
}

// unscheduled says why the scheduler has not placed a pod of trial
// index's load Job (", pod NAME not scheduled: MESSAGE"), "" when it
// placed them all: a load Job kept off the service pods' nodes
// (kubernetes.load_placement: other-node) waits for such a node.
func (r *Runner) unscheduled(ctx context.Context, index int) string {
	pods, err := r.Client.CoreV1().Pods(r.b.Namespace()).List(ctx, metav1.ListOptions{LabelSelector: r.b.RunSelector() + "," + LabelTrial + "=" + fmt.Sprint(index)})
	if err != nil {
		return ""
	}
	for _, p := range pods.Items {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				return fmt.Sprintf(", pod %s not scheduled: %s", p.Name, c.Message)
			}
		}
	}
	return ""
}

// deleteJob deletes a trial's load Job and its pods, whatever became of
// the trial.
func (r *Runner) deleteJob(job string, index int) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns := r.b.Namespace()
	bg := metav1.DeletePropagationBackground
	r.Client.BatchV1().Jobs(ns).Delete(ctx, job, metav1.DeleteOptions{PropagationPolicy: &bg})
	// The API deletes the Job's pods in the background; a Job whose
	// controller is gone would leave them, so toll deletes them too.
	if pods, err := r.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: r.b.RunSelector() + "," + LabelTrial + "=" + fmt.Sprint(index)}); err == nil {
		for _, p := range pods.Items {
			r.Client.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{})
		}
	}
}

func (r *Runner) logName(variant, service string) string {
	return fmt.Sprintf("%s.%s.%d.log", variant, service, r.starts[variant])
}

// Stop keeps the logs of the variant's services in the results directory
// and deletes its pod; then its sink's count ends the telemetry cycle of
// the variant's last trial (backend.Events.Stopped).
func (r *Runner) Stop(ctx context.Context, variant string) error {
	if err := r.stopPod(ctx, variant); err != nil {
		return err
	}
	if r.rr.Events == nil {
		return nil
	}
	return r.rr.Events.Stopped(variant, func(ctx context.Context) (record.Telemetry, time.Time, error) {
		return r.SinkCounts(ctx, variant)
	})
}

// stopPod keeps the logs of the services in the variant's pod and deletes
// the pod.
func (r *Runner) stopPod(ctx context.Context, variant string) error {
	pod, ok := r.pods[variant]
	if !ok {
		return nil
	}
	delete(r.pods, variant)
	err := errors.Join(r.keepLogs(ctx, variant, pod), r.deletePod(context.WithoutCancel(ctx), pod))
	if err != nil {
		return fmt.Errorf("stop variant %s: %w", variant, err)
	}
	return nil
}

// keepLogs writes the logs of the services in a variant's pod to the
// results directory, or why one could not be read.
func (r *Runner) keepLogs(ctx context.Context, variant, pod string) error {
	_, err := r.readLogs(ctx, variant, pod)
	return err
}

// readLogs writes the logs of the services in a variant's pod to the
// results directory, or why one could not be read, and returns those it
// read, by service.
func (r *Runner) readLogs(ctx context.Context, variant, pod string) (map[string][]byte, error) {
	var errs []error
	logs := map[string][]byte{}
	for _, svc := range r.b.variants[variant].Services {
		out, err := r.Logs.Read(context.WithoutCancel(ctx), r.b.Namespace(), pod, objectName(svc.Name), time.Time{})
		if err != nil {
			out = []byte("toll: this container's log could not be read: " + err.Error() + "\n")
		} else {
			logs[svc.Name] = out
		}
		if err := r.rr.Dir.WriteFile("logs/"+r.logName(variant, svc.Name), out); err != nil {
			errs = append(errs, err)
		}
	}
	return logs, errors.Join(errs...)
}

// deletePod deletes a pod and waits until it is gone (its grace period,
// StopGrace, and a margin), so that a stopping variant's last work does
// not run during the next trial, as a local run waits for its processes.
func (r *Runner) deletePod(ctx context.Context, name string) error {
	pods := r.Client.CoreV1().Pods(r.b.Namespace())
	if err := pods.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("delete pod %s: %w", name, err)
	}
	deadline := time.Now().Add(StopGrace + 30*time.Second)
	for {
		_, err := pods.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pod %s: still there %s after toll deleted it", name, StopGrace+30*time.Second)
		}
		if err := sleep(ctx, r.Poll); err != nil {
			return err
		}
	}
}

// closeTimeout bounds the deletion of what a run created in the cluster.
const closeTimeout = 2 * time.Minute

// Close deletes every object of the run, found by its label, within
// closeTimeout.
func (r *Runner) Close(ctx context.Context) error {
	if r.b == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, closeTimeout)
	defer cancel()
	removed, err := DeleteSelected(ctx, r.Client, r.b.Namespace(), r.b.RunSelector())
	if len(removed) > 0 && r.rr.Events != nil {
		r.rr.Events.Say(fmt.Sprintf("toll: deleted the run's %d Kubernetes objects (%s)", len(removed), r.b.RunSelector()))
	}
	if err != nil {
		return fmt.Errorf("%w; `toll k8s gc --run %s -n %s` deletes what is left", err, r.b.run, r.b.Namespace())
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// lastLine decodes the last JSON line of out into v.
func lastLine(out []byte, v any) error {
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		if bytes.HasPrefix(bytes.TrimSpace(lines[i]), []byte("{")) {
			return json.Unmarshal(lines[i], v)
		}
	}
	tail := bytes.TrimSpace(out)
	if len(tail) > 300 {
		tail = tail[len(tail)-300:]
	}
	return fmt.Errorf("no JSON line in its %d bytes (they end %q)", len(out), tail)
}

// samples turns the probe's lines between from and to into each service's
// series, with times relative to t0 (the measured window's start).
func samples(out []byte, services []variant.Service, from, to, t0 time.Time) []record.ServiceSeries {
	by := map[string][]record.Sample{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var pl ProbeLine
		if json.Unmarshal(sc.Bytes(), &pl) != nil || pl.Time.Before(from) || pl.Time.After(to) {
			continue
		}
		p := pl.Sample
		p.T = pl.Time.Sub(t0).Seconds()
		by[pl.Service] = append(by[pl.Service], p)
	}
	var series []record.ServiceSeries
	for _, svc := range services {
		series = append(series, record.ServiceSeries{Service: svc.Name, Source: "proc", Points: by[svc.Name]})
	}
	return series
}

// telemetry turns the sink's lines between from and to into the trial's
// telemetry samples, with times relative to t0.
func telemetry(out []byte, from, to, t0 time.Time) []record.Telemetry {
	var ts []record.Telemetry
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var sl SinkLine
		if json.Unmarshal(sc.Bytes(), &sl) != nil || sl.Time.Before(from) || sl.Time.After(to) {
			continue
		}
		c := sl.Counts
		c.T = sl.Time.Sub(t0).Seconds()
		ts = append(ts, c)
	}
	return ts
}

// SinkCounts waits for the variant's sink to print a line after now (its
// services are stopped) and returns that line's counts: what they sent up
// to and while they stopped.
func (r *Runner) SinkCounts(ctx context.Context, variant string) (record.Telemetry, time.Time, error) {
	sample := r.rr.Scenario.Sample.D()
	wait := 3*sample + 5*time.Second
	ctx, cancel := context.WithTimeout(ctx, wait+5*time.Second)
	defer cancel()
	stopped := time.Now()
	for {
		out, err := r.Logs.Read(ctx, r.b.Namespace(), r.b.SinkName(variant), SinkContainer, stopped.Add(-sample))
		if err != nil {
			return record.Telemetry{}, time.Time{}, err
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			var sl SinkLine
			if json.Unmarshal(sc.Bytes(), &sl) == nil && sl.Time.After(stopped) {
				return sl.Counts, sl.Time, nil
			}
		}
		if time.Since(stopped) > wait {
			return record.Telemetry{}, time.Time{}, fmt.Errorf("its sink printed no count within %s after the stop", wait)
		}
		if err := sleep(ctx, r.Poll); err != nil {
			return record.Telemetry{}, time.Time{}, err
		}
	}
}
