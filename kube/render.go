package kube

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/tollperf/toll/plan"
	"github.com/tollperf/toll/scenario"
)

// RenderOptions choose what Render prints.
type RenderOptions struct {
	// Run is the LabelRun value to print (Render's objects belong to no
	// run yet); default "render".
	Run string
	// Seed orders the trials as a run with this seed would (default the
	// scenario's, else 1).
	Seed int64
	// RBAC adds the ServiceAccount, Role and RoleBinding toll needs.
	RBAC bool
}

// Render writes, as a multi-document YAML stream, the objects a run of s
// creates in the order it creates them: per variant its sink and its
// Service, then for each action of the plan the variant's pod (one per
// start: per round with restart: per-round) and each trial's load Job; a
// start-up experiment's pod per start, a job experiment's Job per run of
// the job. Each document is preceded by a comment saying when the run
// creates it.
func Render(w io.Writer, s *scenario.Scenario, opt RenderOptions) error {
	if opt.Run == "" {
		opt.Run = "render"
	}
	seed := opt.Seed
	if seed == 0 {
		seed = s.Seed
	}
	if seed == 0 {
		seed = 1
	}
	b, err := NewBuilder(s, opt.Run, "")
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	doc := func(comment string, o runtime.Object) error {
		y, err := yaml.Marshal(o)
		if err != nil {
			return fmt.Errorf("render %s: %w", comment, err)
		}
		fmt.Fprintf(&buf, "---\n# %s\n%s", comment, y)
		return nil
	}
	if opt.RBAC {
		sa, role, binding := RBAC(b.Namespace())
		for _, o := range []runtime.Object{sa, role, binding} {
			if err := doc("what toll's CLI needs in namespace "+b.Namespace(), o); err != nil {
				return err
			}
		}
	}
	for _, v := range s.Variants {
		if err := doc("variant "+v.Name+": its telemetry sink, for the whole run", b.SinkPod(v.Name)); err != nil {
			return err
		}
		if err := doc("variant "+v.Name+": ${sink}", b.SinkService(v.Name)); err != nil {
			return err
		}
		if s.Workload() != scenario.WorkloadLoad {
			continue
		}
		if err := doc("variant "+v.Name+": the load's way to its pod", b.Service(v.Name)); err != nil {
			return err
		}
	}
	starts := map[string]int{}
	fresh := map[string]bool{}
	for _, a := range plan.New(s, seed).Actions {
		switch a.Kind {
		case plan.Start:
			if len(b.variants[a.Variant].Services) == 0 {
				continue // a job experiment without services: no pod
			}
			starts[a.Variant]++
			fresh[a.Variant] = true
			if err := doc(fmt.Sprintf("variant %s: start %d of its services", a.Variant, starts[a.Variant]), b.Pod(a.Variant, starts[a.Variant])); err != nil {
				return err
			}
		case plan.Run:
			t := a.Trial
			if s.Workload() == scenario.WorkloadJob {
				if err := doc(fmt.Sprintf("job %d: %s, repetition %d", t.Index, t.Variant, t.Round), b.WorkJob(t)); err != nil {
					return err
				}
				continue
			}
			if s.Workload() == scenario.WorkloadStartup {
				starts[t.Variant]++
				if err := doc(fmt.Sprintf("start %d: %s, repetition %d", t.Index, t.Variant, t.Round), b.StartupPod(t, starts[t.Variant])); err != nil {
					return err
				}
				continue
			}
			if err := doc(fmt.Sprintf("trial %d: round %d, %s at %s", t.Index, t.Round, t.Variant, scenario.Step{Rate: t.Rate, Users: t.Users}), b.Job(t, time.Time{}, fresh[t.Variant])); err != nil {
				return err
			}
			fresh[t.Variant] = false
		case plan.RunAtOnce:
			return fmt.Errorf("%s: mode: %s runs on one machine only (it pins every side to CPUs of one machine); --sequential renders the scenario one variant at a time", s.Path, s.Mode)
		}
	}
	_, err = w.Write(buf.Bytes())
	return err
}
