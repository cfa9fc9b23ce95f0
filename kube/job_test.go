package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
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

// TestWorkJob checks a job experiment's Kubernetes Job: the variant's job
// run through `toll k8s job` with its timeout, in the job's image, with
// toll copied in by an init container when that image is not toll's, and
// the scenario's environment for the job alone; a job that starts with
// toll runs in toll's image without one. A job beside services is refused.
func TestWorkJob(t *testing.T) {
	s, err := scenario.Read("testdata/job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBuilder(s, "42-7", "")
	if err != nil {
		t.Fatal(err)
	}
	j := b.WorkJob(&plan.Trial{Index: 4, Variant: "otel"})
	spec := j.Spec.Template.Spec
	c := spec.Containers[0]
	want := []string{"/toll-bin/toll", "k8s", "job", "--timeout", "1m0s", "--", "/opt/java/bin/java", "-version"}
	if c.Image != "toll-java:dev" || !slices.Equal(c.Command, want) || len(spec.InitContainers) != 1 || spec.InitContainers[0].Image != tollImageOf(s) {
		t.Errorf("job container %s %q, init containers %+v; want toll-java:dev running %q, toll copied in", c.Image, c.Command, spec.InitContainers, want)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	if env["JAVA_TOOL_OPTIONS"] != "-javaagent:/app/opentelemetry-javaagent.jar" || !strings.Contains(env["OTEL_EXPORTER_OTLP_ENDPOINT"], "_SERVICE_HOST)") ||
		env["TOLL_RUN"] != "42-7" || env["PATH"] != "" || len(env) != 3 {
		t.Errorf("job environment %v: want the scenario's alone, ${sink} the sink's Service, and TOLL_RUN", env)
	}
	if j.Labels[LabelComponent] != ComponentJob || j.Labels[LabelTrial] != "4" || *j.Spec.BackoffLimit != 0 {
		t.Errorf("labels %v, backoff %d", j.Labels, *j.Spec.BackoffLimit)
	}
	src, err := os.ReadFile("testdata/job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tollJob := strings.Replace(string(src), "command: [/opt/java/bin/java, -version]", "command: [toll, version]", 1)
	s2, err := scenario.Parse("job2.yaml", []byte(tollJob))
	if err != nil {
		t.Fatal(err)
	}
	b2, err := NewBuilder(s2, "42-7", "")
	if err != nil {
		t.Fatal(err)
	}
	spec = b2.WorkJob(&plan.Trial{Index: 1, Variant: "baseline"}).Spec.Template.Spec
	if c := spec.Containers[0]; c.Image != tollImageOf(s2) || c.Command[0] != TollPath || len(spec.InitContainers) != 0 {
		t.Errorf("a toll job: image %s, command %q, %d init containers; want toll's image and binary, none", c.Image, c.Command, len(spec.InitContainers))
	}
	withService := strings.Replace(tollJob, "variants:", "services:\n  - {name: broker, command: [toll, app, provider, --addr, \"127.0.0.1:${port:b}\"], ready: {tcp: \"127.0.0.1:${port:b}\"}}\nvariants:", 1)
	s3, err := scenario.Parse("job3.yaml", []byte(withService))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewBuilder(s3, "42-7", ""); err == nil || !strings.Contains(err.Error(), "job experiment with services") {
		t.Errorf("a job beside services: %v, want a refusal", err)
	}
}

// tollImageOf is the toll image s's objects name.
func tollImageOf(s *scenario.Scenario) string {
	if s.Kubernetes != nil && s.Kubernetes.TollImage != "" {
		return s.Kubernetes.TollImage
	}
	return scenario.DefaultTollImage
}

// TestJobTrial runs one job against a fake API server whose Job's pod ends
// as the test says, and checks the trial read from the last line of the
// job's log: its timeline, CPU time, memory and exit, a figure from its
// output and the sink's counts around it; a job that exits with an error,
// or whose image cannot run, is a failed trial, not an error of the run.
func TestJobTrial(t *testing.T) {
	s, err := scenario.Read("testdata/job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Truncate(time.Millisecond)
	jobLine := func(jl JobLine) string {
		b, err := json.Marshal(jl)
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	done := corev1.PodStatus{Phase: corev1.PodSucceeded}
	neverPull := corev1.PodStatus{Phase: corev1.PodPending, InitContainerStatuses: []corev1.ContainerStatus{{Name: "toll-install",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImageNeverPull", Message: "not present with pull policy of Never"}}}}}
	for _, tt := range []struct {
		name   string
		status corev1.PodStatus
		log    string
		failed string // in the job's error; "" for a job that succeeded
	}{
		{"succeeds", done, "openjdk version \"17.0.9\" 2023-10-17\n" + jobLine(JobLine{Start: start, End: start.Add(1500 * time.Millisecond), UserS: 1.25, SystemS: 0.25, MaxRSSBytes: 80 << 20}), ""},
		{"exits 1", done, jobLine(JobLine{Start: start, End: start.Add(time.Second), ExitCode: 1, Error: "exited with exit status 1"}), "exited with exit status 1"},
		{"its image cannot run", neverPull, "", "ErrImageNeverPull"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset()
			ready := corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
			client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
				a.(k8stesting.CreateAction).GetObject().(*corev1.Pod).Status = ready // the sinks
				return false, nil, nil
			})
			var podName string
			client.PrependReactor("create", "jobs", func(a k8stesting.Action) (bool, runtime.Object, error) {
				j := a.(k8stesting.CreateAction).GetObject().(*batchv1.Job)
				pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: j.Name + "-x1", Namespace: j.Namespace, Labels: j.Spec.Template.Labels},
					Spec: j.Spec.Template.Spec, Status: tt.status}
				pod.Spec.NodeName = "node-b"
				podName = pod.Name
				if err := client.Tracker().Add(pod); err != nil {
					return true, nil, err
				}
				return false, nil, nil
			})
			dir, err := record.CreateExact(filepath.Join(t.TempDir(), "results"))
			if err != nil {
				t.Fatal(err)
			}
			m := &record.Manifest{}
			logs := &jobLogs{sink: `{"time":"` + start.Add(time.Hour).Format(time.RFC3339Nano) + `","counts":{"spans":40}}` + "\n"}
			r := &Runner{Client: client, Logs: logs, Poll: time.Millisecond, ScheduleTimeout: time.Second, Host: "h"}
			if err := r.Setup(context.Background(), backend.Run{Scenario: s, ID: runid.ID{Pid: 42, Start: 7}, Dir: dir, Manifest: m}); err != nil {
				t.Fatal(err)
			}
			logs.job = func() (string, string) { return podName, tt.log }
			tr, err := r.JobTrial(context.Background(), &plan.Trial{Index: 1, Round: 1, Variant: "otel"})
			if err != nil {
				t.Fatalf("JobTrial: %v", err)
			}
			jr := tr.Job
			if tt.failed != "" {
				if !jr.Failed || !strings.Contains(jr.Error, tt.failed) {
					t.Errorf("failed %v (%s), want a failed job saying %q", jr.Failed, jr.Error, tt.failed)
				}
			} else {
				if jr.Failed || jr.WallS != 1.5 || jr.UserS != 1.25 || jr.SystemS != 0.25 || jr.MaxRSSBytes != 80<<20 || jr.Work != 1 || jr.Unit != "starts" {
					t.Errorf("job %+v", jr)
				}
				if jr.LogMetrics["java_version_n"] != 17 {
					t.Errorf("log metrics %v, want java_version_n 17", jr.LogMetrics)
				}
				if !tr.MeasureStart.Equal(start) || !tr.MeasureEnd.Equal(start.Add(1500*time.Millisecond)) {
					t.Errorf("window %v to %v, want the job's fork to its exit", tr.MeasureStart, tr.MeasureEnd)
				}
				if len(tr.Telemetry) != 2 || tr.Telemetry[1].Spans != 40 {
					t.Errorf("telemetry %+v, want the sink's counts before and after", tr.Telemetry)
				}
			}
			jobs, err := client.BatchV1().Jobs(r.b.Namespace()).List(context.Background(), metav1.ListOptions{})
			if err != nil || len(jobs.Items) != 0 {
				t.Errorf("the Kubernetes Job is still there: %v %v", jobs, err)
			}
			if !slices.Contains(m.Notes, JobNote) {
				t.Errorf("manifest notes %q", m.Notes)
			}
		})
	}
}

// jobLogs serves the sink's log and the job's, whose pod the test names
// once the Job is created.
type jobLogs struct {
	sink string
	job  func() (pod, log string)
}

func (l *jobLogs) Read(_ context.Context, _, pod, container string, _ time.Time) ([]byte, error) {
	if container == SinkContainer {
		return []byte(l.sink), nil
	}
	if name, log := l.job(); pod == name && container == JobContainer {
		return []byte(log), nil
	}
	return nil, nil
}

// TestJobCommand runs `toll k8s job`'s work on this machine: a job that
// succeeds is timed from its fork to its exit with its CPU time and
// memory, one that exits with a status or outlives its timeout says so,
// and one that cannot start too, each in the one line the run reads.
func TestJobCommand(t *testing.T) {
	for _, tt := range []struct {
		name    string
		argv    []string
		timeout time.Duration
		code    int
		err     string // in the line's error; "" for none
	}{
		{"succeeds", []string{"sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"}, time.Minute, 0, ""},
		{"exits 3", []string{"sh", "-c", "exit 3"}, time.Minute, 3, "exited with exit status 3"},
		{"times out", []string{"sleep", "30"}, 100 * time.Millisecond, -1, "timed out after 100ms"},
		{"cannot start", []string{"/nonexistent/job"}, time.Minute, -1, "no such file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			before := time.Now()
			if err := Job(context.Background(), &out, tt.argv, tt.timeout, time.Second); err != nil {
				t.Fatal(err)
			}
			var jl JobLine
			if err := lastLine(out.Bytes(), &jl); err != nil {
				t.Fatal(err)
			}
			if jl.ExitCode != tt.code || (tt.err == "") != (jl.Error == "") || !strings.Contains(jl.Error, tt.err) {
				t.Errorf("exit %d (%q), want %d (%q)", jl.ExitCode, jl.Error, tt.code, tt.err)
			}
			if jl.Start.Before(before) || jl.End.Before(jl.Start) || time.Since(jl.End) < 0 {
				t.Errorf("timeline %v to %v, want within the call from %v", jl.Start, jl.End, before)
			}
			if tt.name == "succeeds" && (jl.UserS+jl.SystemS <= 0 || jl.MaxRSSBytes == 0) {
				t.Errorf("CPU %.3f s, max RSS %d: want what sh spent", jl.UserS+jl.SystemS, jl.MaxRSSBytes)
			}
			if tt.name == "times out" && jl.End.Sub(jl.Start) > 10*time.Second {
				t.Errorf("a job past its timeout of %s ran %s", tt.timeout, jl.End.Sub(jl.Start))
			}
		})
	}
}
