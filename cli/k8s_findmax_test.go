package cli

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tollperf/toll/kube"
	"github.com/tollperf/toll/run"
	"github.com/tollperf/toll/scenario"
)

// TestKubernetesFindMax searches each variant's highest rate through the
// Kubernetes runner against the fake cluster, as toll run --kubernetes
// --find-max does: the search's trials are the load Jobs' (recorded from
// the pods' output), findmax.json holds every variant's search within its
// budget of trials, and every object the run created is gone at the end.
func TestKubernetesFindMax(t *testing.T) {
	const maxTrials = 3
	f := newFakeCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := scenario.Read(writeKubeScenario(t, "find_max: {start: 50, max_trials: 3, precision: 0.5, slo_p99: 1s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	dctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f.drive(dctx) }()
	dir, err := run.Run(ctx, s, run.Options{Out: filepath.Join(t.TempDir(), "results"), Version: "test", FindMax: true,
		Progress: testProgress(t), Backend: &kube.Runner{Client: f.client, Logs: f, Poll: 10 * time.Millisecond, ScheduleTimeout: 20 * time.Second,
			LoadStartDelay: time.Second}})
	stop()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	m, err := dir.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.Mode != "find-max" || m.Layout.Place != "kubernetes" {
		t.Errorf("manifest mode %q, place %q; want find-max in kubernetes", m.Mode, m.Layout.Place)
	}
	fm, err := dir.ReadFindMax()
	if err != nil || fm == nil {
		t.Fatalf("findmax.json: %v, %v", fm, err)
	}
	searched := 0
	for _, v := range fm.Variants {
		if len(v.Trials) == 0 || len(v.Trials) > maxTrials {
			t.Errorf("%s: %d trials, want 1..%d", v.Name, len(v.Trials), maxTrials)
		}
		searched += len(v.Trials)
	}
	if len(fm.Variants) != 2 {
		t.Errorf("%d variants searched, want 2", len(fm.Variants))
	}
	trials, _, err := dir.ReadTrials()
	if err != nil {
		t.Fatal(err)
	}
	if len(trials) != searched {
		t.Errorf("%d trial records, want the search's %d", len(trials), searched)
	}
	for _, tr := range trials {
		if tr.Load.Sent == 0 {
			t.Errorf("trial %d (%s at %g req/s): no request sent", tr.Index, tr.Variant, tr.TargetRate)
		}
	}
	if n := f.createdKinds(); n["jobs"] != searched {
		t.Errorf("created %v; want a load Job per trial (%d)", n, searched)
	}
	if left := f.left(t); len(left) > 0 {
		t.Errorf("left in the cluster after the search: %v", left)
	}
}
