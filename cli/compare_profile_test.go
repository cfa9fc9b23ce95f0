package cli

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pprof "github.com/google/pprof/profile"

	"github.com/tollperf/toll/e2e/tolltest"
	"github.com/tollperf/toll/probe/profile"
	"github.com/tollperf/toll/record"
)

// writeProfiledRun writes a results directory of 5 rounds at 100 req/s
// whose trials were profiled: the baseline's consumer spends 100 µs of CPU
// per request in app.handle, the agent's the same plus spanUS in the
// agent's span code; without profiled, the same run without profiles.
func writeProfiledRun(t *testing.T, spanUS float64, profiled bool) string {
	t.Helper()
	const span = "go.opentelemetry.io/otel/sdk/trace.(*recordingSpan).End"
	d, err := record.CreateExact(filepath.Join(t.TempDir(), "run"))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WriteManifest(&record.Manifest{Scenario: "profiles", Baseline: "baseline", Variants: []string{"baseline", "agent"}, Rounds: 5,
		Finished: time.Unix(2000, 0)}); err != nil {
		t.Fatal(err)
	}
	noise := []float64{1, 1.03, 0.97, 1.01, 0.99}
	start := time.Unix(1000, 0)
	for r := 1; r <= 5; r++ {
		for i, v := range []string{"baseline", "agent"} {
			perUS := map[string]float64{"app.handle": 100 * noise[r-1]}
			if v == "agent" {
				perUS[span] = spanUS * noise[r-1]
			}
			total := 0.0
			for _, us := range perUS {
				total += us / 1e6
			}
			tr := &record.Trial{Index: 2*r - 1 + i, Round: r, Variant: v, TargetRate: 100, PlannedS: 4,
				MeasureStart: start, MeasureEnd: start.Add(4 * time.Second), Services: []record.ServiceRun{{Name: "svc", Measured: true}}}
			tr.Samples = []record.ServiceSeries{{Service: "svc", Points: []record.Sample{{T: 0, CPU: 1}, {T: 4, CPU: 1 + 400*total}}}}
			for s := 0; s < 4; s++ {
				tr.Intervals = append(tr.Intervals, record.Interval{T: float64(s), Scheduled: 100, Sent: 100, Completed: 100, OK: 100})
			}
			if profiled {
				tr.Profile = &record.TrialProfile{File: record.TrialProfileFile(tr), Services: []string{"svc"}, Profiler: "perf"}
				if err := d.WriteProfile(tr.Profile.File, secondsProfile(4, 100, perUS)); err != nil {
					t.Fatal(err)
				}
			}
			if err := d.WriteTrial(tr); err != nil {
				t.Fatal(err)
			}
		}
	}
	return d.Path
}

// secondsProfile is a profile of seconds whole seconds at rate requests a
// second in which each function of perUS, a leaf called from main.main,
// ran that many µs per request, as probe/profile writes one.
func secondsProfile(seconds int, rate float64, perUS map[string]float64) *pprof.Profile {
	p := &pprof.Profile{
		SampleType: []*pprof.ValueType{{Type: profile.SamplesType, Unit: "count"}, {Type: profile.CPUType, Unit: "nanoseconds"}},
		PeriodType: &pprof.ValueType{Type: profile.CPUType, Unit: "nanoseconds"},
		Period:     1_000_000,
	}
	m := &pprof.Mapping{ID: 1, File: "svc", HasFunctions: true}
	p.Mapping = []*pprof.Mapping{m}
	loc := func(name string) *pprof.Location {
		for _, l := range p.Location {
			if l.Line[0].Function.Name == name {
				return l
			}
		}
		fn := &pprof.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name, Filename: "svc"}
		p.Function = append(p.Function, fn)
		l := &pprof.Location{ID: uint64(len(p.Location) + 1), Mapping: m, Line: []pprof.Line{{Function: fn}}}
		p.Location = append(p.Location, l)
		return l
	}
	root := loc("main.main")
	for s := range seconds {
		for name, us := range perUS {
			ns := int64(us * rate * 1000)
			p.Sample = append(p.Sample, &pprof.Sample{
				Location: []*pprof.Location{loc(name), root},
				Value:    []int64{ns / 1_000_000, ns},
				Label:    map[string][]string{profile.LabelService: {"svc"}, profile.LabelThread: {"svc"}},
				NumLabel: map[string][]int64{profile.LabelSecond: {int64(s)}},
				// As probe/profile writes it: without its unit, pprof
				// drops a numeric label of 0 when it writes the profile.
				NumUnit: map[string][]string{profile.LabelSecond: {"seconds"}},
			})
		}
	}
	return p
}

// TestCompareProfilesFromDirs runs toll compare on two results
// directories: with both profiled, the agent's span code, whose cost
// doubled, is the top moved function in the text and in the JSON; with
// one profiled, the text says which run has profiles and shows none.
func TestCompareProfilesFromDirs(t *testing.T) {
	const span = "go.opentelemetry.io/otel/sdk/trace.(*recordingSpan).End"
	a := writeProfiledRun(t, 40, true)
	for _, tt := range []struct {
		name    string
		b       string
		section bool
		note    string
	}{
		{"both profiled", writeProfiledRun(t, 80, true), true, "the runs are independent"},
		{"B not profiled", writeProfiledRun(t, 80, false), false, "Profiles are in run A only"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			text, err := tolltest.Command(t, "compare", a, tt.b).CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, text)
			}
			title := "Where agent's added CPU per request moved at 100 req/s"
			if got := strings.Contains(string(text), title); got != tt.section || !strings.Contains(string(text), tt.note) {
				t.Fatalf("a profile section %v, want %v, and %q in:\n%s", got, tt.section, tt.note, text)
			}
			if tt.section {
				for _, top := range []struct{ title, name string }{
					{title, "go.opentelemetry.io/otel/sdk/trace "},
					{"By the function that asked for the work", span},
					{"By the function sampled", span},
				} {
					after := string(text)[strings.Index(string(text), top.title):]
					if rows := strings.Split(after, "\n"); len(rows) < 4 || !strings.HasPrefix(rows[3], "  "+top.name) || strings.Contains(rows[3], "~") {
						t.Errorf("%s is not the top row with a change of %q:\n%s", top.name, top.title, after)
					}
				}
			}
			cmd := tolltest.Command(t, "compare", a, tt.b, "--json")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v\n%s", err, stderr.String())
			}
			var doc struct {
				ProfilesIn string `json:"profiles_in"`
				Steps      []struct {
					Variants []struct {
						Profile *struct {
							Functions []struct {
								Name        string  `json:"name"`
								Change      float64 `json:"change_ms"`
								Significant bool    `json:"significant"`
							} `json:"functions"`
						} `json:"profile"`
					} `json:"variants"`
				} `json:"steps"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
				t.Fatalf("%v\n%s", err, stdout.String())
			}
			p := doc.Steps[0].Variants[0].Profile
			if (p != nil) != tt.section {
				t.Fatalf("JSON profile %v, want %v:\n%s", p != nil, tt.section, stdout.String())
			}
			if p != nil && (len(p.Functions) == 0 || p.Functions[0].Name != span || !p.Functions[0].Significant ||
				p.Functions[0].Change < 0.038 || p.Functions[0].Change > 0.042) {
				t.Errorf("JSON functions %+v, want the span first at +0.040 ms, significant", p.Functions)
			}
		})
	}
}
