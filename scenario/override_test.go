package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReadWithOverrides checks the short version of a scenario: rounds,
// warm-up and window replaced from the command line, the rest of the file
// kept, the overridden values in the Source that the results directory
// keeps, every line where it was (errors name the file's lines), and a
// value out of bounds refused, naming its flag.
func TestReadWithOverrides(t *testing.T) {
	path := filepath.Join(t.TempDir(), "demo.yaml")
	src := good + "rounds: 20\ntrim: {start: 1s, end: 1s}\nreport: {layout: sermant}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	two, three, warm, window, trimmed := 2, 3, 500*time.Millisecond, 3*time.Second, time.Second
	perRound, never := RestartPerRound, "never"
	tests := []struct {
		name             string
		o                Overrides
		rounds           int
		warmup, duration time.Duration
		err              string
	}{
		{"none", Overrides{}, 20, 5 * time.Second, 10 * time.Second, ""},
		{"all", Overrides{Rounds: &two, Warmup: &warm, Duration: &window}, 2, warm, window, ""},
		{"rounds only", Overrides{Rounds: &two}, 2, 5 * time.Second, 10 * time.Second, ""},
		{"restart", Overrides{Restart: &perRound}, 20, 5 * time.Second, 10 * time.Second, ""},
		{"restart unknown", Overrides{Restart: &never}, 0, 0, 0, `--restart "never" is not one of once, per-round, per-trial`},
		{"rounds 0", Overrides{Rounds: new(int)}, 0, 0, 0, "--rounds 0: must be between 1 and 10000"},
		{"starts", Overrides{Starts: &two}, 20, 5 * time.Second, 10 * time.Second, ""},
		{"starts 0", Overrides{Starts: new(int)}, 0, 0, 0, "--starts 0: must be between 1 and 10000"},
		// Starts the rounds cannot split: named by the flag, not by a line
		// of the rewritten document.
		{"starts beyond the rounds", Overrides{Rounds: &two, Starts: &three}, 0, 0, 0, path + ": --starts 3: 3 starts need at least as many rounds, and rounds is 2"},
		{"window 0", Overrides{Duration: new(time.Duration)}, 0, 0, 0, "--duration 0s: "},
		// A window the file's trim leaves nothing of: the file's line.
		{"trim beyond the window", Overrides{Duration: &trimmed}, 0, 0, 0, path + ":23: trim: trims 2s of a 1s window"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ReadWith(path, tt.o)
			if tt.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Rounds != tt.rounds || s.Load.Warmup.D() != tt.warmup || s.Load.Duration.D() != tt.duration {
				t.Errorf("rounds %d warmup %s duration %s, want %d %s %s", s.Rounds, s.Load.Warmup.D(), s.Load.Duration.D(), tt.rounds, tt.warmup, tt.duration)
			}
			if want := 1; tt.o.Starts != nil && s.Starts != *tt.o.Starts || tt.o.Starts == nil && s.Starts != want {
				t.Errorf("starts %d, want %v", s.Starts, tt.o.Starts)
			}
			if tt.o.Restart != nil && s.Restart != *tt.o.Restart {
				t.Errorf("restart %q, want %q", s.Restart, *tt.o.Restart)
			}
			if s.Report.Layout != LayoutSermant || len(s.Variants) != 2 || s.Variants[1].Services["consumer"].Env["A"] != "b" {
				t.Errorf("the rest of the file was not kept: %+v", s)
			}
			// The file sets no warm-up, restart or starts: any of them
			// overridden is written anew.
			if got := strings.Count(string(s.Source), "\n"); tt.o.Warmup == nil && tt.o.Restart == nil && tt.o.Starts == nil && got != strings.Count(src, "\n") {
				t.Errorf("the overrides moved lines: %d lines, the file has %d", got, strings.Count(src, "\n"))
			}
			again, err := Parse(path, s.Source)
			if err != nil || again.Rounds != s.Rounds || again.Load.Duration != s.Load.Duration || again.Starts != s.Starts {
				t.Errorf("Source does not hold the overrides: %v\n%s", err, s.Source)
			}
		})
	}
}

// TestReadWithSequential checks --sequential: a shared duet in turns read
// as the default schedule, its duet placement and slice left out and the
// rest kept; a scenario that is no duet is read as it is. A split duet
// is read as the sequential run it becomes, on a machine of any size,
// though Read refuses it on fewer than MinDuetCPUs.
func TestReadWithSequential(t *testing.T) {
	dir := t.TempDir()
	duet := strings.Replace(good, "  duration: 10s\n", "  duration: 10s\n  slice: 50ms\n", 1) +
		"mode: duet\npinning: {duet: shared, load: \"0\"}\nrounds: 20\n"
	split := good + "mode: duet\nrounds: 20\n"
	for name, src := range map[string]string{"duet": duet, "split duet": split, "plain": good} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name+".yaml")
			if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := ReadWith(path, Overrides{Sequential: true})
			if err != nil {
				t.Fatal(err)
			}
			if s.Mode != ModeSequential || s.Pinning.Duet != "" || s.Load.Slice != 0 {
				t.Errorf("mode %q, pinning.duet %q, load.slice %s: want a sequential run", s.Mode, s.Pinning.Duet, s.Load.Slice.D())
			}
			if name == "duet" && (s.Rounds != 20 || s.Pinning.Load != "0" || s.Load.Duration.D() != 10*time.Second) {
				t.Errorf("the rest of the file was not kept: rounds %d, pinning.load %q, duration %s", s.Rounds, s.Pinning.Load, s.Load.Duration.D())
			}
		})
	}
}

// TestReadWithVars checks --set: a placeholder of the user's own filled in
// before the file is read (the Source keeps the value), and refused when
// the name is toll's, the value could change the YAML, or the file has no
// such placeholder.
func TestReadWithVars(t *testing.T) {
	path := filepath.Join(t.TempDir(), "versions.yaml")
	src := strings.Replace(good, "name: demo", "name: demo-${version}", 1)
	if src == good {
		t.Fatal("the test's scenario has no name: demo to template")
	}
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ReadWith(path, Overrides{Vars: map[string]string{"version": "2.10.0"}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "demo-2.10.0" || !strings.Contains(string(s.Source), "demo-2.10.0") {
		t.Errorf("name %q, source holds the value: %v", s.Name, strings.Contains(string(s.Source), "demo-2.10.0"))
	}
	for vars, want := range map[string]string{
		"sink=x":            "toll's own placeholder",
		"port_app=1":        "toll's own placeholder",
		"version=1.0: evil": "no spaces or quotes",
		"version=a'b":       "no spaces or quotes",
		"commit=abc":        "the scenario has no ${commit}",
		"9lives=1":          "a name is letters",
	} {
		k, v, _ := strings.Cut(vars, "=")
		if _, err := ReadWith(path, Overrides{Vars: map[string]string{k: v}}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--set %s: %v, want %q", vars, err, want)
		}
	}
}
