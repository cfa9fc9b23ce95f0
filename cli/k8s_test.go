package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"sigs.k8s.io/yaml"

	"github.com/tollperf/toll/e2e/tolltest"
	"github.com/tollperf/toll/kube"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/run"
	"github.com/tollperf/toll/scenario"
)

// fakeNamespace is where the fake cluster's objects go.
const fakeNamespace = "toll-e2e"

// writeKubeScenario writes a two-variant, two-round scenario of toll's
// reference app for a cluster.
func writeKubeScenario(t *testing.T, extra ...string) string {
	t.Helper()
	src := `name: k8s-e2e
services:
  - name: provider
    command: [toll, app, provider, --addr, "127.0.0.1:${port:provider}", --work, "5000"]
    ready: {http: "http://127.0.0.1:${port:provider}/health", timeout: 10s}
    cpu_limit: 1
    memory_limit: 256MiB
  - name: consumer
    command: [toll, app, consumer, --addr, "${listen}:${port:consumer}",
              --provider, "http://127.0.0.1:${port:provider}/provider"]
    env: {OTEL_EXPORTER_OTLP_ENDPOINT: "${sink}"}
    ready: {http: "http://127.0.0.1:${port:consumer}/health", timeout: 10s}
    cpu_limit: 2
    memory_limit: 512MiB
    measure: true
variants:
  - name: baseline
  - name: otel
    exports: true
    services:
      consumer: {args: [--trace, otel]}
load:
  target: "http://127.0.0.1:${port:consumer}"
  requests:
    - {name: consumer, path: /consumer}
  rate: 200
  warmup: 0s
  duration: 1s
rounds: 2
sample: 100ms
kubernetes:
  namespace: ` + fakeNamespace + `
` + strings.Join(extra, "")
	path := filepath.Join(t.TempDir(), "k8s-e2e.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// fakeCluster plays the cluster's part around client-go's fake clientset:
// it drives the pods toll creates through their phases (scheduled on a
// node, running, ready), runs each load Job's command for real (toll's
// load generator, in this process, against a local server standing in for
// the variant's Service), and answers pod logs as the containers would:
// the load's line, and the probe's and the sink's per-interval lines, with
// the otel variant's consumer costing twice the baseline's CPU.
type fakeCluster struct {
	t      *testing.T
	client *fake.Clientset
	target *httptest.Server
	onJob  func() // called as each load Job is seen, before its load runs
	// badImage names a variant whose service pods cannot pull an image.
	badImage string
	mu       sync.Mutex
	created  []string // kind/name of every object toll created
	started  map[string]time.Time
	loadOut  map[string][]byte // load pod -> its output
	jobs     int
}

func newFakeCluster(t *testing.T) *fakeCluster {
	f := &fakeCluster{t: t, client: fake.NewClientset(), started: map[string]time.Time{}, loadOut: map[string][]byte{}}
	f.target = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	t.Cleanup(f.target.Close)
	f.client.PrependReactor("create", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if c, ok := a.(k8stesting.CreateAction); ok {
			if m, err := metaOf(c.GetObject()); err == nil && m.GetLabels()[kube.LabelManagedBy] == kube.ManagedBy {
				f.mu.Lock()
				f.created = append(f.created, a.GetResource().Resource+"/"+m.GetName())
				f.mu.Unlock()
			}
		}
		return false, nil, nil
	})
	return f
}

func metaOf(o runtime.Object) (metav1.Object, error) {
	m, ok := o.(metav1.Object)
	if !ok {
		return nil, errors.New("no metadata")
	}
	return m, nil
}

// drive moves the cluster's objects along until ctx is done.
func (f *fakeCluster) drive(ctx context.Context) {
	for ctx.Err() == nil {
		f.step(ctx)
		time.Sleep(10 * time.Millisecond)
	}
}

func (f *fakeCluster) step(ctx context.Context) {
	pods := f.client.CoreV1().Pods(fakeNamespace)
	list, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for _, p := range list.Items {
		if p.Status.Phase != "" {
			continue
		}
		p.Spec.NodeName = "node-a"
		up, err := pods.Update(ctx, &p, metav1.UpdateOptions{})
		if err != nil {
			continue
		}
		up.Status.Phase = corev1.PodRunning
		up.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		if p.Labels[kube.LabelComponent] == kube.ComponentLoad {
			up.Status.Phase = corev1.PodSucceeded
			up.Status.Conditions = nil
		}
		if p.Labels[kube.LabelComponent] == kube.ComponentServices && p.Labels[kube.LabelVariant] == f.badImage {
			up.Status.Phase = corev1.PodPending
			up.Status.Conditions = nil
			up.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "consumer",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "toll:latest: not found"}}}}
		}
		// The pod has started before anyone can see it ready: toll reads
		// its probe as soon as it is.
		f.mu.Lock()
		f.started[p.Name] = time.Now()
		f.mu.Unlock()
		if _, err := pods.UpdateStatus(ctx, up, metav1.UpdateOptions{}); err != nil {
			f.mu.Lock()
			delete(f.started, p.Name)
			f.mu.Unlock()
		}
	}
	jobs := f.client.BatchV1().Jobs(fakeNamespace)
	jl, err := jobs.List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for _, j := range jl.Items {
		if j.Status.Succeeded > 0 || j.Status.Failed > 0 || j.Annotations["fake/seen"] != "" {
			continue
		}
		j.Annotations = map[string]string{"fake/seen": "1"}
		if _, err := jobs.Update(ctx, &j, metav1.UpdateOptions{}); err != nil {
			continue
		}
		f.mu.Lock()
		f.jobs++
		f.mu.Unlock()
		// The Job controller's part: its pods from the template, which
		// run toll's load command, for real and at once, against the
		// stand-in Service. The pods exist before onJob is called: a
		// cancellation there must find them, as a real cluster's garbage
		// collector deletes a deleted Job's pods, which the fake does not
		// (created after the run's cleanup, they were left behind).
		n := 1
		if j.Spec.Parallelism != nil {
			n = int(*j.Spec.Parallelism)
		}
		var created []*corev1.Pod
		for i := range n {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", j.Name, i), Namespace: fakeNamespace, Labels: j.Spec.Template.Labels},
				Spec: j.Spec.Template.Spec, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
			pod.Spec.NodeName = "node-b" // the scheduler's part: off the services' node
			if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				f.t.Errorf("create load pod: %v", err)
				continue
			}
			f.mu.Lock()
			f.started[pod.Name] = time.Now()
			f.mu.Unlock()
			created = append(created, pod)
		}
		if f.onJob != nil {
			f.onJob()
		}
		var wg sync.WaitGroup
		for _, pod := range created {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out := f.runLoad(ctx, j.Spec.Template.Spec.Containers[0].Command)
				f.mu.Lock()
				f.loadOut[pod.Name] = out
				f.mu.Unlock()
				pod.Status.Phase = corev1.PodSucceeded
				if _, err := pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
					f.t.Logf("load pod status: %v", err)
				}
			}()
		}
		wg.Wait()
		j.Status.Succeeded = int32(n)
		if _, err := jobs.UpdateStatus(ctx, &j, metav1.UpdateOptions{}); err != nil {
			f.t.Logf("job status: %v", err)
		}
	}
}

// runLoad runs a load Job's `toll k8s load` command in this process, its
// requests sent to the stand-in server instead of the Service's address.
func (f *fakeCluster) runLoad(ctx context.Context, argv []string) []byte {
	cmd := newK8sLoadCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetContext(ctx)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	args := append([]string(nil), argv[3:]...) // after "/toll k8s load"
	for i, a := range args {
		if i > 0 && args[i-1] == "--requests" {
			var rs []kube.LoadRequest
			if err := json.Unmarshal([]byte(a), &rs); err != nil {
				f.t.Errorf("load --requests: %v", err)
			}
			for k := range rs {
				u, _ := url.Parse(rs[k].URL)
				if !strings.HasPrefix(u.Hostname(), "$(TOLL_") || !strings.HasSuffix(u.Hostname(), "_SERVICE_HOST)") {
					f.t.Errorf("load URL %s is not the variant's Service's address", rs[k].URL)
				}
				rs[k].URL = f.target.URL + u.Path
			}
			b, _ := json.Marshal(rs)
			args[i] = string(b)
		}
	}
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		f.t.Logf("load: %v", err)
	}
	return out.Bytes()
}

// servicePod matches the name of a pod of a variant's services (its start's
// number last: -s1).
var servicePod = regexp.MustCompile(`-s[0-9]+$`)

// Read answers pod logs as the pod's containers would have printed them.
func (f *fakeCluster) Read(_ context.Context, ns, pod, container string, since time.Time) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	start, ok := f.started[pod]
	if !ok {
		return nil, fmt.Errorf("pod %s/%s has not started", ns, pod)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	cores := 0.1 // the baseline consumer's CPU
	if strings.Contains(pod, "-otel-") {
		cores = 0.2
	}
	switch container {
	case kube.LoadContainer:
		return f.loadOut[pod], nil
	case kube.ProbeContainer:
		// A service pod's probe times its services' start first: each
		// launched at the pod's start, ready 30 ms later.
		if ready := start.Add(30 * time.Millisecond); servicePod.MatchString(pod) && !ready.Before(since) {
			for _, svc := range []string{"provider", "consumer"} {
				enc.Encode(kube.StartLine{Time: ready, Start: kube.ServiceStart{Service: svc, Launched: start, PortOpen: ready, Ready: ready}})
			}
		}
		for at := start; at.Before(time.Now()); at = at.Add(100 * time.Millisecond) {
			if at.Before(since) {
				continue
			}
			el := at.Sub(start).Seconds()
			enc.Encode(kube.ProbeLine{Time: at, Service: "provider", Sample: record.Sample{CPU: 0.05 * el, RSS: 10 << 20, Threads: 8, Procs: 1}})
			enc.Encode(kube.ProbeLine{Time: at, Service: "consumer", Sample: record.Sample{CPU: cores * el, RSS: 20 << 20, Threads: 9, Procs: 1}})
		}
	case kube.SinkContainer:
		for at := start; at.Before(time.Now()); at = at.Add(100 * time.Millisecond) {
			if at.Before(since) {
				continue
			}
			var c record.Telemetry
			if strings.Contains(pod, "-otel-") {
				n := uint64(at.Sub(start).Seconds() * 10)
				c = record.Telemetry{Requests: n, Bytes: 1000 * n, Spans: 80 * n}
			}
			enc.Encode(kube.SinkLine{Time: at, Counts: c})
		}
	default:
		fmt.Fprintf(&b, "%s of %s started\n", container, pod)
	}
	return b.Bytes(), nil
}

// left lists the run's objects still in the fake cluster.
func (f *fakeCluster) left(t *testing.T) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	pods, err := f.client.CoreV1().Pods(fakeNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		out = append(out, "pods/"+p.Name)
	}
	svcs, err := f.client.CoreV1().Services(fakeNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range svcs.Items {
		out = append(out, "services/"+s.Name)
	}
	jobs, err := f.client.BatchV1().Jobs(fakeNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs.Items {
		out = append(out, "jobs/"+j.Name)
	}
	return out
}

func (f *fakeCluster) createdKinds() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := map[string]int{}
	for _, c := range f.created {
		kind, _, _ := strings.Cut(c, "/")
		n[kind]++
	}
	return n
}

// runInFakeCluster runs the scenario at path through the Kubernetes runner
// against f, as toll run --kubernetes does, until ctx is done or the run
// ends.
func runInFakeCluster(t *testing.T, ctx context.Context, f *fakeCluster, path string) (*record.Dir, error) {
	t.Helper()
	s, err := scenario.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	dctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f.drive(dctx) }()
	defer func() { stop(); <-done }()
	return run.Run(ctx, s, run.Options{Out: filepath.Join(t.TempDir(), "results"), Version: "test",
		Progress: testProgress(t), Backend: &kube.Runner{Client: f.client, Logs: f, Poll: 10 * time.Millisecond, ScheduleTimeout: 20 * time.Second,
			// Time for the fake to start a Job's pods, in this process: 300
			// ms was too short at load 20, a pod then starting after the
			// others' --not-before.
			LoadStartDelay: time.Second}})
}

// TestKubernetesRunFakeCluster drives a whole two-variant, two-round run
// through the Kubernetes runner against client-go's fake clientset: every
// trial is recorded from the pods' output, toll report renders the results
// directory and sees the otel consumer's doubled CPU, and every object the
// run created is gone at the end.
func TestKubernetesRunFakeCluster(t *testing.T) {
	f := newFakeCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir, err := runInFakeCluster(t, ctx, f, writeKubeScenario(t))
	if err != nil {
		t.Fatal(err)
	}
	m, err := dir.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.Layout.Place != "kubernetes" || m.Layout.Kubernetes == nil || !slices.Equal(m.Layout.Kubernetes.Nodes["otel"], record.NodeSet{"node-a"}) {
		t.Fatalf("manifest layout %+v", m.Layout)
	}
	// Every pod of the run, with the node it was scheduled on.
	placed := map[string]int{}
	for _, p := range m.Layout.Kubernetes.Pods {
		node := "node-a"
		if p.Component == kube.ComponentLoad {
			node = "node-b"
		}
		if p.Node != node || p.Name == "" || (p.Component == kube.ComponentLoad) != (p.Trial > 0) {
			t.Errorf("manifest pod %+v", p)
		}
		placed[p.Component]++
	}
	if placed[kube.ComponentSink] != 2 || placed[kube.ComponentServices] != 2 || placed[kube.ComponentLoad] != 4 {
		t.Errorf("manifest pods by component %v; want 2 sinks, 2 service pods, 4 load pods", placed)
	}
	if n := f.createdKinds(); n["pods"] < 2+2+4 || n["services"] != 4 || n["jobs"] != 4 {
		t.Errorf("created %v; want 2 sink pods, 2 service pods, 4 load pods, 4 Services, 4 Jobs", n)
	}
	if left := f.left(t); len(left) > 0 {
		t.Errorf("left in the cluster after the run: %v", left)
	}
	trials, _, err := dir.ReadTrials()
	if err != nil {
		t.Fatal(err)
	}
	ends := 0
	for _, tr := range trials {
		// restart: once: each variant's first trial holds its start, timed
		// by the probe from launch to ready, and no later one does.
		first := tr.Round == 1
		for _, sr := range tr.Services {
			if sr.Started != first || (first && math.Abs(sr.StartupS-0.03) > 1e-6) || (!first && sr.StartupS != 0) {
				t.Errorf("trial %d (%s, round %d), service %s: started %v, start-up %gs; want the probe's 0.03s in round 1 only", tr.Index, tr.Variant, tr.Round, sr.Name, sr.Started, sr.StartupS)
			}
		}
		if tr.Node != "node-a" {
			t.Errorf("trial %d: node %q, want its services' node-a", tr.Index, tr.Node)
		}
		if tr.TelemetryEnd != nil {
			ends++
			if tr.Variant == "otel" && (tr.TelemetryEnd.Spans <= tr.Telemetry[len(tr.Telemetry)-1].Spans || tr.TelemetryEnd.T <= tr.Telemetry[len(tr.Telemetry)-1].T) {
				t.Errorf("otel's telemetry at its stop %+v is not after its last sample %+v", tr.TelemetryEnd, tr.Telemetry[len(tr.Telemetry)-1])
			}
		}
	}
	if ends != 2 { // restart: once, so each variant's last trial
		t.Errorf("%d trials with the sink's count at their services' stop, want 2", ends)
	}
	if b, err := os.ReadFile(dir.LogPath("otel.consumer.1.log")); err != nil || !strings.Contains(string(b), "consumer of toll-k8s-e2e-otel-") {
		t.Errorf("the otel consumer's log in the results: %q, %v", b, err)
	}

	rep := tolltest.Command(t, "report", dir.Path)
	out, err := rep.CombinedOutput()
	if err != nil {
		t.Fatalf("toll report: %v\n%s", err, out)
	}
	sum := tolltest.ReadSummary(t, dir.Path)
	for _, v := range []string{"baseline", "otel"} {
		for _, st := range sum.Steps {
			for _, sv := range st.Variants {
				if sv.Name == v && sv.Rounds != 2 {
					t.Errorf("%s: %d rounds, want 2", v, sv.Rounds)
				}
			}
		}
	}
	base, otel := sum.Value(t, "baseline", "cpu_cores"), sum.Value(t, "otel", "cpu_cores")
	if otel < 1.5*base || base <= 0 {
		t.Errorf("cpu_cores: baseline %.3f, otel %.3f; the probe says the measured consumer uses 0.1 and 0.2", base, otel)
	}
	if ms := sum.Value(t, "otel", "startup_ms"); math.Abs(ms-30) > 1e-6 {
		t.Errorf("otel startup_ms %g, want the probe's 30 ms from launch to ready", ms)
	}
	if tput := sum.Value(t, "otel", "throughput_rps"); tput < 100 {
		t.Errorf("otel throughput %.1f req/s; the load Job sent 200", tput)
	}
	if !strings.Contains(string(out), "otel") {
		t.Errorf("report does not show otel:\n%s", out)
	}
}

// TestKubernetesRunLoadPods runs each trial's load from two pods of its
// Job, each at half the rate from one instant, and checks that the trial
// holds their merged counts and histograms.
func TestKubernetesRunLoadPods(t *testing.T) {
	f := newFakeCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir, err := runInFakeCluster(t, ctx, f, writeKubeScenario(t, "  load_pods: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if n := f.createdKinds(); n["jobs"] != 4 || n["pods"] != 2+2+8 {
		t.Errorf("created %v; want 4 Jobs of 2 load pods each", n)
	}
	trials, _, err := dir.ReadTrials()
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range trials {
		// Two pods at 100 req/s each for 1 s.
		if tr.Interrupted || tr.Load.Completed < 150 || tr.Load.Completed > 250 || tr.Load.OK != tr.Load.Completed {
			t.Errorf("trial %d: %d completed, %d OK, error %q; want about 200", tr.Index, tr.Load.Completed, tr.Load.OK, tr.Error)
		}
		var sum uint64
		for _, iv := range tr.Intervals {
			sum += iv.Completed
		}
		if sum != tr.Load.Completed || len(tr.Load.Requests) != 1 || tr.Load.Requests[0].Completed != tr.Load.Completed {
			t.Errorf("trial %d: per-second %d and per-request %+v against %d in all", tr.Index, sum, tr.Load.Requests, tr.Load.Completed)
		}
		h, err := hdr.Decode([]byte(tr.Load.Histogram))
		if err != nil || uint64(h.TotalCount()) != tr.Load.Completed {
			t.Errorf("trial %d: merged histogram (%v), want %d values", tr.Index, err, tr.Load.Completed)
		}
	}
	if left := f.left(t); len(left) > 0 {
		t.Errorf("left: %v", left)
	}
}

// TestKubernetesRunCancelled cancels a run as its first load Job starts
// (Ctrl-C) and checks that every object it created is deleted.
func TestKubernetesRunCancelled(t *testing.T) {
	f := newFakeCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f.onJob = cancel
	_, err := runInFakeCluster(t, ctx, f, writeKubeScenario(t))
	if !errors.Is(err, run.ErrInterrupted) {
		t.Fatalf("error %v, want an interrupted run", err)
	}
	if n := f.createdKinds(); n["pods"] < 4 || n["jobs"] < 1 {
		t.Fatalf("created %v before the cancel; the test cancels too early", n)
	}
	if left := f.left(t); len(left) > 0 {
		t.Errorf("left in the cluster after a cancelled run: %v", left)
	}
}

// TestKubernetesRunPodNeverReady checks that a pod that cannot start (an
// image that cannot be pulled) fails the run with its reason, and that the
// run's objects are deleted.
func TestKubernetesRunPodNeverReady(t *testing.T) {
	f := newFakeCluster(t)
	f.badImage = "otel"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := runInFakeCluster(t, ctx, f, writeKubeScenario(t))
	if err == nil || !strings.Contains(err.Error(), "variant otel") || !strings.Contains(err.Error(), "container consumer: ErrImagePull") {
		t.Fatalf("error %v; want one naming the variant, the container and ErrImagePull", err)
	}
	if left := f.left(t); len(left) > 0 {
		t.Errorf("left in the cluster after a failed start: %v", left)
	}
	if !strings.Contains(err.Error(), "its services' logs are in") {
		t.Errorf("error %v does not say where the services' logs are", err)
	}
}

// TestKubernetesRender runs toll k8s render on the quickstart and decodes
// its output strictly into the API types.
func TestKubernetesRender(t *testing.T) {
	out, err := tolltest.Command(t, "k8s", "render", "--sequential", "--rbac", "../examples/quickstart.yaml").Output()
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(out), "\n---\n")
	var pods int
	for _, d := range docs {
		d = strings.TrimPrefix(d, "---\n")
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(d), &tm); err != nil {
			t.Fatal(err)
		}
		if tm.Kind != "Pod" {
			continue
		}
		var p corev1.Pod
		if err := yaml.UnmarshalStrict([]byte(d), &p); err != nil {
			t.Fatalf("strict decode: %v", err)
		}
		pods++
		if p.Labels[kube.LabelScenario] != "quickstart" || p.Labels[kube.LabelRun] == "" {
			t.Errorf("%s: labels %v", p.Name, p.Labels)
		}
	}
	if pods != 22 { // two sinks, and one pod per variant per round (the quickstart restarts per round: 10 × 2)
		t.Errorf("%d pods, want 22", pods)
	}
}

// TestKubernetesRenderImages checks that --toll-image and
// --image-pull-policy reach every container toll runs, for a cluster
// without a registry, and that a bad policy is refused.
func TestKubernetesRenderImages(t *testing.T) {
	out, err := tolltest.Command(t, "k8s", "render", "--sequential", "--toll-image", "toll:dev", "--image-pull-policy", "Never", "../examples/quickstart.yaml").Output()
	if err != nil {
		t.Fatal(err)
	}
	checkImages(t, out, "toll:dev", corev1.PullNever)
	if err := tolltest.Command(t, "k8s", "render", "--sequential", "--image-pull-policy", "Sometimes", "../examples/quickstart.yaml").Run(); err == nil {
		t.Error("--image-pull-policy Sometimes was accepted")
	}
}

// TestKubernetesDefaultsFromEnv checks that the three flags a run on the
// project's test cluster needs (--toll-image, --image-pull-policy,
// --sequential for the quickstart's duet) take their defaults from the
// variables scripts/kube-cluster.sh env exports, that a flag given
// overrides its variable, and that a bad value is refused.
func TestKubernetesDefaultsFromEnv(t *testing.T) {
	cluster := []string{envTollImage + "=toll:dev", envPullPolicy + "=Never", envSequential + "=1"}
	tests := []struct {
		name       string
		env, args  []string
		image      string
		policy     corev1.PullPolicy
		wantRefuse bool
	}{
		{"the cluster's variables alone", cluster, nil, "toll:dev", corev1.PullNever, false},
		{"flags over the variables", cluster, []string{"--toll-image", "toll:other", "--image-pull-policy", "IfNotPresent"}, "toll:other", corev1.PullIfNotPresent, false},
		{"--sequential=false over the variable: the duet is refused", cluster, []string{"--sequential=false"}, "", "", true},
		{"no variables: the duet is refused", nil, nil, "", "", true},
		{"a bad sequential variable", []string{envSequential + "=sometimes"}, nil, "", "", true},
		{"a bad policy variable", []string{envSequential + "=true", envPullPolicy + "=Sometimes"}, nil, "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := tolltest.Command(t, append(append([]string{"k8s", "render"}, tt.args...), "../examples/quickstart.yaml")...)
			// The variables of this machine's shell do not count.
			env := slices.DeleteFunc(cmd.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "TOLL_KUBE_") })
			cmd.Env = append(env, tt.env...)
			out, err := cmd.Output()
			if tt.wantRefuse {
				if err == nil {
					t.Error("rendered, want a refusal")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkImages(t, out, tt.image, tt.policy)
		})
	}
}

// checkImages checks that every container of the objects rendered in out
// runs image with pull policy policy.
func checkImages(t *testing.T, out []byte, image string, policy corev1.PullPolicy) {
	t.Helper()
	var containers int
	for _, d := range strings.Split(string(out), "\n---\n") {
		var o struct {
			Kind string
			Spec struct {
				corev1.PodSpec `json:",inline"`
				Template       *corev1.PodTemplateSpec `json:"template"`
			}
		}
		if err := yaml.Unmarshal([]byte(strings.TrimPrefix(d, "---\n")), &o); err != nil {
			t.Fatal(err)
		}
		cs := o.Spec.Containers
		if o.Spec.Template != nil {
			cs = o.Spec.Template.Spec.Containers
		}
		for _, c := range cs {
			containers++
			if c.Image != image || c.ImagePullPolicy != policy {
				t.Errorf("%s %s: image %s, pull policy %q; want %s, %s", o.Kind, c.Name, c.Image, c.ImagePullPolicy, image, policy)
			}
		}
	}
	if containers == 0 {
		t.Fatal("no container rendered")
	}
}

// testProgress passes a run's progress lines to the test's log.
func testProgress(t *testing.T) *logWriter { return &logWriter{t: t} }

type logWriter struct{ t *testing.T }

func (w *logWriter) Write(b []byte) (int, error) {
	w.t.Logf("%s %s", time.Now().Format("15:04:05.000"), strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// TestKubernetesInPodCommands runs, as local processes, the commands toll
// runs inside a cluster: a service labelled as a pod's container would be,
// `toll k8s ready` as its readiness probe, `toll k8s probe` sampling it
// beside a process of another run, and `toll k8s load` as a trial's Job;
// their output is what the Kubernetes runner reads back.
func TestKubernetesInPodCommands(t *testing.T) {
	label := fmt.Sprintf("test-%d", os.Getpid())
	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	start := func(args []string, env ...string) *exec.Cmd {
		c := tolltest.Command(t, args...)
		c.Env = append(c.Env, env...)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
		return c
	}
	start([]string{"app", "provider", "--addr", addr, "--work", "20000"}, "TOLL_RUN="+label, kube.EnvService+"=provider")
	// A service of another run on the same machine (or pod) is not ours.
	start([]string{"app", "provider", "--addr", fmt.Sprintf("127.0.0.1:%d", freePort(t))}, "TOLL_RUN=other-run", kube.EnvService+"=intruder")

	deadline := time.Now().Add(20 * time.Second)
	for tolltest.Command(t, "k8s", "ready", "--http", "http://"+addr+"/health").Run() != nil {
		if time.Now().After(deadline) {
			t.Fatal("toll k8s ready never passed for a started provider")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if tolltest.Command(t, "k8s", "ready", "--tcp", fmt.Sprintf("127.0.0.1:%d", freePort(t))).Run() == nil {
		t.Error("toll k8s ready passed for a port nobody listens on")
	}

	var probeOut bytes.Buffer
	probe := tolltest.Command(t, "k8s", "probe", "--interval", "200ms")
	probe.Env = append(probe.Env, "TOLL_RUN="+label)
	probe.Stdout = &probeOut
	if err := probe.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { probe.Process.Kill() })

	reqs := fmt.Sprintf(`[{"name":"provider","url":"http://%s/provider","weight":1}]`, addr)
	out, err := tolltest.Command(t, "k8s", "load", "--requests", reqs, "--rate", "200", "--warmup", "200ms", "--duration", "2s").Output()
	if err != nil {
		t.Fatalf("toll k8s load: %v\n%s", err, out)
	}
	time.Sleep(300 * time.Millisecond)
	probe.Process.Signal(os.Interrupt)
	if err := probe.Wait(); err != nil {
		t.Errorf("toll k8s probe on SIGINT: %v", err)
	}

	var ll kube.LoadLine
	if err := json.Unmarshal(bytes.TrimSpace(out), &ll); err != nil {
		t.Fatalf("load output: %v\n%s", err, out)
	}
	if ll.Load.Completed < 300 || ll.Load.OK != ll.Load.Completed || ll.Load.Histogram == "" || len(ll.Intervals) < 2 || ll.Error != "" {
		t.Errorf("load: %d completed, %d OK, %d intervals, histogram %t, error %q; want about 400 OK at 200 req/s for 2 s",
			ll.Load.Completed, ll.Load.OK, len(ll.Intervals), ll.Load.Histogram != "", ll.Error)
	}
	if !ll.MeasureEnd.After(ll.MeasureStart) || ll.MeasureStart.Sub(ll.Start) != 200*time.Millisecond {
		t.Errorf("load timeline start %v, window %v to %v", ll.Start, ll.MeasureStart, ll.MeasureEnd)
	}

	var first, last *kube.ProbeLine
	for _, line := range bytes.Split(bytes.TrimSpace(probeOut.Bytes()), []byte("\n")) {
		var pl kube.ProbeLine
		if err := json.Unmarshal(line, &pl); err != nil {
			t.Fatalf("probe line %q: %v", line, err)
		}
		if pl.Service != "provider" {
			t.Fatalf("the probe sampled %q, a service of another run", pl.Service)
		}
		if first == nil {
			first = &pl
		}
		last = &pl
	}
	if first == nil || last.Time.Sub(first.Time) < 2*time.Second {
		t.Fatalf("probe lines from %v to %v; want the whole load", first, last)
	}
	if last.Sample.CPU <= first.Sample.CPU || last.Sample.RSS == 0 || last.Sample.Procs != 1 || last.Sample.Threads == 0 {
		t.Errorf("provider under load: CPU %.3f s -> %.3f s, RSS %d, %d procs, %d threads", first.Sample.CPU, last.Sample.CPU,
			last.Sample.RSS, last.Sample.Procs, last.Sample.Threads)
	}
}

// freePort returns a port nothing listens on at the moment.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestKubernetesProbeReadsJVM runs `toll k8s probe` beside a real JVM
// labelled as a pod's service and checks that its samples carry the JVM's
// hsperfdata counters, as a local run's do.
func TestKubernetesProbeReadsJVM(t *testing.T) {
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skip("no java: scripts/install-test-deps.sh installs it")
	}
	label := fmt.Sprintf("jvm-test-%d", os.Getpid())
	src := filepath.Join(t.TempDir(), "Idle.java")
	if err := os.WriteFile(src, []byte("public class Idle { public static void main(String[] a) throws Exception { Thread.sleep(60000); } }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	jvmCmd := exec.Command(java, "-Xmx64m", src) // the single-file source launcher
	jvmCmd.Env = append(os.Environ(), "TOLL_RUN="+label, kube.EnvService+"=app")
	if err := jvmCmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { jvmCmd.Process.Kill(); jvmCmd.Wait() })

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	probe := tolltest.Command(t, "k8s", "probe", "--interval", "200ms")
	probe.Env = append(probe.Env, "TOLL_RUN="+label)
	probe.Stdout = &out
	if err := probe.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { probe.Process.Kill(); probe.Wait() })
	// The JVM writes its hsperfdata file early in its start; the probe
	// looks for it in its first samples.
	for ctx.Err() == nil {
		time.Sleep(200 * time.Millisecond)
		if bytes.Contains(out.Bytes(), []byte(`"classes_loaded"`)) {
			break
		}
	}
	probe.Process.Signal(os.Interrupt)
	probe.Wait()
	var last kube.ProbeLine
	for _, line := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
		if err := json.Unmarshal(line, &last); err != nil {
			t.Fatalf("probe line %q: %v", line, err)
		}
	}
	if j := last.Sample.Runtime("jvm"); j == nil || j.Pid != jvmCmd.Process.Pid || j.Values["classes_loaded"] < 100 || j.Values["heap_committed"] == 0 {
		t.Fatalf("last probe sample of the JVM: %+v; want its hsperfdata counters", last.Sample)
	}
}
