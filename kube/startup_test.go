package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/procfs"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/tollperf/toll/backend"
	"github.com/tollperf/toll/plan"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/runid"
	"github.com/tollperf/toll/scenario"
)

// TestStartupPod checks the pod of one cold start: toll's probe comes
// first, so that it runs before the services start, and times each
// service's readiness check (probe --startup); the step's CPU limit
// replaces every service's own, and a start-up experiment has no load
// Service, since it has no target.
func TestStartupPod(t *testing.T) {
	s, err := scenario.Read("testdata/startup.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBuilder(s, "42-7", "")
	if err != nil {
		t.Fatalf("a start-up experiment, which has no load target: %v", err)
	}
	p := b.StartupPod(&plan.Trial{Index: 3, Variant: "baseline", CPULimit: 0.5}, 2)
	cs := p.Spec.Containers
	if len(cs) != 3 || cs[0].Name != ProbeContainer {
		t.Fatalf("containers %v: want toll's probe first, then the two services", containerNames(cs))
	}
	i := slices.Index(cs[0].Command, "--startup")
	if i < 0 || i+1 >= len(cs[0].Command) {
		t.Fatalf("probe command %q: no --startup", cs[0].Command)
	}
	var checks []StartCheck
	if err := json.Unmarshal([]byte(cs[0].Command[i+1]), &checks); err != nil {
		t.Fatal(err)
	}
	want := []StartCheck{{Service: "provider", HTTP: "http://127.0.0.1:8080/health"}, {Service: "helper", TCP: "127.0.0.1:8081"}}
	if fmt.Sprint(checks) != fmt.Sprint(want) {
		t.Errorf("--startup %+v, want %+v", checks, want)
	}
	if !cs[0].Resources.Limits.Cpu().IsZero() {
		t.Errorf("probe: CPU limit %s, want none: a throttled probe sees a start late", cs[0].Resources.Limits.Cpu())
	}
	for _, c := range cs[1:] {
		if got := c.Resources.Limits.Cpu().MilliValue(); got != 500 {
			t.Errorf("container %s: CPU limit %dm, want the step's 500m", c.Name, got)
		}
	}
	if got := cs[1].Resources.Limits.Memory().Value(); got != 64<<20 {
		t.Errorf("provider: memory limit %d, want its own 64 MiB", got)
	}
	if p.Labels[LabelTrial] != "3" || p.Labels[LabelStart] != "2" || p.Labels[LabelComponent] != ComponentServices {
		t.Errorf("labels %v", p.Labels)
	}
	var out strings.Builder
	if err := Render(&out, s, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	d := decodeStrict(t, []byte(out.String()))
	if len(d.pods) != 2+4 || len(d.services) != 2 || len(d.jobs) != 0 {
		t.Errorf("rendered %d pods, %d Services, %d Jobs; want 2 sinks and 4 starts, 2 sink Services, no Job", len(d.pods), len(d.services), len(d.jobs))
	}
}

func containerNames(cs []corev1.Container) []string {
	var n []string
	for _, c := range cs {
		n = append(n, c.Name)
	}
	return n
}

// fakeLogs serves containers' logs from a map by "pod/container".
type fakeLogs map[string]string

func (f fakeLogs) Read(_ context.Context, _, pod, container string, _ time.Time) ([]byte, error) {
	return []byte(f[pod+"/"+container]), nil
}

// TestStartupTrial runs one cold start against a fake API server whose
// pods become ready (or fail) as they are created, and checks the trial
// read from the probe's lines: seconds from each service's launch, CPU,
// RSS and the JVM's start-up at ready, a figure from the log; a pod that
// fails, or a start the probe could not time, fails the trial, not the
// run; and the pod is gone when the trial returns.
func TestStartupTrial(t *testing.T) {
	s, err := scenario.Read("testdata/startup.yaml")
	if err != nil {
		t.Fatal(err)
	}
	launched := time.Now().Add(time.Minute).Truncate(time.Millisecond)
	at := func(ms int) time.Time { return launched.Add(time.Duration(ms) * time.Millisecond) }
	line := func(ss ServiceStart) string {
		b, err := json.Marshal(StartLine{Time: at(400), Start: ss})
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	provider := ServiceStart{Service: "provider", Launched: launched, PortOpen: at(300), Ready: at(350), CPU: 0.25, RSS: 30 << 20,
		JVMCreated: at(100), JVMInitDone: at(250), Classes: 4000}
	helper := ServiceStart{Service: "helper", Launched: at(10), PortOpen: at(40), Ready: at(40)}
	sample := `{"time":"2026-11-27T18:00:00Z","service":"provider","sample":{"cpu":0.1}}` + "\n"
	ready := corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	exited := corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "provider",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 2}}}}}
	noProcess := provider
	noProcess.Launched = time.Time{}
	for _, tt := range []struct {
		name   string
		status corev1.PodStatus
		probe  string
		failed string // in the trial's error; "" for a measured start
	}{
		{"ready", ready, line(provider) + sample + line(helper), ""},
		{"a service exits", exited, "", "container provider exited (Error, code 2)"},
		{"the probe printed one start of two", ready, line(helper), "printed the start of 1 of its 2 services"},
		{"the probe found no process", ready, line(noProcess) + line(helper), "no process of service provider"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset()
			client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
				p := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
				p.Spec.NodeName = "node-a"
				if p.Labels[LabelComponent] == ComponentServices {
					p.Status = tt.status
				} else {
					p.Status = ready
				}
				return false, nil, nil
			})
			dir, err := record.CreateExact(filepath.Join(t.TempDir(), "results"))
			if err != nil {
				t.Fatal(err)
			}
			m := &record.Manifest{}
			r := &Runner{Client: client, Poll: time.Millisecond, ScheduleTimeout: time.Second, StartLineWait: 50 * time.Millisecond, Host: "h"}
			logs := fakeLogs{}
			r.Logs = logs
			if err := r.Setup(context.Background(), backend.Run{Scenario: s, ID: runid.ID{Pid: 42, Start: 7}, Dir: dir, Manifest: m}); err != nil {
				t.Fatal(err)
			}
			pod := r.b.PodName("baseline", 1)
			logs[pod+"/"+ProbeContainer] = tt.probe
			logs[pod+"/provider"] = "listening on 127.0.0.1:8080\n"
			tr, err := r.StartupTrial(context.Background(), &plan.Trial{Index: 1, Round: 1, Variant: "baseline", CPULimit: 0.5})
			if err != nil {
				t.Fatalf("StartupTrial: %v", err)
			}
			su := tr.Startup
			if su == nil || su.CPULimit != 0.5 {
				t.Fatalf("start-up record %+v: want one at the step's CPU limit", su)
			}
			if tt.failed != "" {
				if !su.Failed || !strings.Contains(su.Error, tt.failed) {
					t.Errorf("failed %v (%s), want a failed start saying %q", su.Failed, su.Error, tt.failed)
				}
			} else {
				if su.Failed || len(su.Services) != 2 {
					t.Fatalf("start-up %+v: want the start of both services", su)
				}
				p, h := su.Services[0], su.Services[1]
				near := func(got, want float64) bool { return math.Abs(got-want) < 1e-6 }
				if p.Name != "provider" || !p.Measured || !near(p.ReadyS, 0.35) || !near(p.PortOpenS, 0.3) || p.CPUS != 0.25 || p.RSSBytes != 30<<20 {
					t.Errorf("provider's start %+v", p)
				}
				if j := p.JVM; j == nil || !near(j.CreatedS, 0.1) || !near(j.InitDoneS, 0.25) || j.Classes != 4000 {
					t.Errorf("provider's JVM start %+v", p.JVM)
				}
				if p.LogMetrics["port_n"] != 8080 {
					t.Errorf("provider's log metrics %v, want port_n 8080", p.LogMetrics)
				}
				if h.Name != "helper" || h.Measured || !near(h.ReadyS, 0.03) || h.JVM != nil {
					t.Errorf("helper's start %+v", h)
				}
				if !tr.MeasureEnd.Equal(at(350)) {
					t.Errorf("measure end %v, want the last service's ready %v", tr.MeasureEnd, at(350))
				}
			}
			if b, err := os.ReadFile(dir.LogPath("baseline.provider.1.log")); err != nil || len(b) == 0 {
				t.Errorf("the provider's log was not kept: %v", err)
			}
			pods, err := client.CoreV1().Pods(r.b.Namespace()).List(context.Background(), metav1.ListOptions{LabelSelector: LabelComponent + "=" + ComponentServices})
			if err != nil || len(pods.Items) != 0 {
				t.Errorf("the start's pod is still there: %v %v", pods, err)
			}
			if tt.status.Phase == ready.Phase && tt.status.Conditions != nil && tr.Node != "node-a" {
				t.Errorf("trial's node %q, want the start's node-a", tr.Node)
			}
			if !slices.Contains(m.Notes, StartupNote) {
				t.Errorf("manifest notes %q", m.Notes)
			}
			if tt.status.Phase == ready.Phase && tt.status.Conditions != nil && !slices.Equal(m.Layout.Kubernetes.Nodes["baseline"], record.NodeSet{"node-a"}) {
				t.Errorf("manifest nodes %v, want the start's", m.Layout.Kubernetes.Nodes)
			}
		})
	}
}

// TestJobVariantWarmup checks that the load Job of a variant's first trial
// since its pod started begins with the variant warm-up, and the others
// with their own warm-up only.
func TestJobVariantWarmup(t *testing.T) {
	warm := scenario.Duration(30 * time.Second)
	s, err := scenario.ReadWith("../examples/quickstart.yaml", scenario.Overrides{Sequential: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Load.VariantWarmup = warm
	b, err := NewBuilder(s, "42-7", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		fresh bool
		want  string
	}{{true, "31s"}, {false, "1s"}} {
		args := b.Job(&plan.Trial{Index: 1, Variant: "baseline", Rate: 100}, time.Time{}, tt.fresh).Spec.Template.Spec.Containers[0].Command
		i := slices.Index(args, "--warmup")
		if i < 0 || args[i+1] != tt.want {
			t.Errorf("fresh %v: load command %q, want --warmup %s", tt.fresh, args, tt.want)
		}
	}
}

// TestWatchStarts runs the probe's timing of a start on this machine: a
// process of the run (TOLL_RUN and TOLL_SERVICE in its environment) and a
// readiness check that passes only once the test says so. The line dates
// the process's start, read from /proc in clock ticks since boot, between
// the test's clock readings around its fork; the check's pass after the
// test let it; the port's opening before that; and the process's memory.
func TestWatchStarts(t *testing.T) {
	var open atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !open.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	before := time.Now()
	cmd := exec.Command("sleep", "30")
	cmd.Env = append(os.Environ(), runid.EnvVar+"=watch-test", EnvService+"=svc")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		t.Fatal(err)
	}
	opened := make(chan time.Time, 1)
	go func() {
		time.Sleep(100 * time.Millisecond)
		at := time.Now()
		open.Store(true)
		opened <- at
	}()
	var buf bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	watchStarts(ctx, &lineWriter{enc: json.NewEncoder(&buf)}, fs, "watch-test", []StartCheck{{Service: "svc", HTTP: srv.URL}})
	st, ok := parseStartLines(buf.Bytes())["svc"]
	if !ok {
		t.Fatalf("no start line for svc in %q", buf.String())
	}
	const tick = 10 * time.Millisecond // /proc's clock tick, and a margin
	if st.Launched.Before(before.Add(-2*tick)) || st.Launched.After(after.Add(2*tick)) {
		t.Errorf("launched %s, want between the fork's %s and %s", st.Launched.Format(time.StampMicro), before.Format(time.StampMicro), after.Format(time.StampMicro))
	}
	if at := <-opened; st.Ready.Before(at) || st.PortOpen.After(st.Ready) || st.PortOpen.Before(before) {
		t.Errorf("port open %s, ready %s; the check could pass from %s", st.PortOpen.Format(time.StampMicro), st.Ready.Format(time.StampMicro), at.Format(time.StampMicro))
	}
	if st.RSS == 0 || !st.JVMInitDone.IsZero() {
		t.Errorf("RSS %d, JVM %v: want sleep's memory and no JVM", st.RSS, st.JVMInitDone)
	}
}

// TestWatchStartsResolvesQuickStart checks that the probe reads a quick
// start to about a tenth of itself, as a local start-up experiment does: a
// check that can pass 27 ms into the watch is seen soon after, where
// checks every 25 ms would see it only at 50 ms. The least lag over a few
// tries keeps a loaded machine's late wake-ups out.
func TestWatchStartsResolvesQuickStart(t *testing.T) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		t.Fatal(err)
	}
	const opens = 27 * time.Millisecond
	least := time.Hour
	for try := 0; try < 5 && least > 10*time.Millisecond; try++ {
		var from atomic.Int64 // when the check may pass, in Unix nanoseconds
		from.Store(time.Now().Add(time.Hour).UnixNano())
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if time.Now().UnixNano() < from.Load() {
				w.WriteHeader(http.StatusServiceUnavailable)
			}
		}))
		var buf bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		at := time.Now().Add(opens)
		from.Store(at.UnixNano())
		watchStarts(ctx, &lineWriter{enc: json.NewEncoder(&buf)}, fs, "watch-quick-test", []StartCheck{{Service: "svc", HTTP: srv.URL}})
		cancel()
		srv.Close()
		st, ok := parseStartLines(buf.Bytes())["svc"]
		if !ok {
			t.Fatalf("no start line for svc in %q", buf.String())
		}
		least = min(least, st.Ready.Sub(at))
	}
	if least > 10*time.Millisecond {
		t.Errorf("ready %s after the check could pass at best, want within 10ms (a check every 25ms would see it about 23ms late)", least)
	}
}
