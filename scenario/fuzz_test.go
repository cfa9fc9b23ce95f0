package scenario

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/http/httpguts"
)

// FuzzParse feeds the scenario parser arbitrary files. It must never panic;
// it must refuse a file with one *Error that names the file, on one line,
// or return a scenario that holds what validation promises.
func FuzzParse(f *testing.F) {
	err := filepath.WalkDir("../examples", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".yaml") {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			f.Add(data)
		}
		return err
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(good))
	f.Add([]byte(strings.Replace(good, "  rate: 100\n", "  users: [5, 10]\n  think: 10ms\n", 1)))
	f.Add([]byte(strings.Replace(good, "name: demo\n", "name: demo\nmode: duet\npinning: {duet: shared, load: \"0\"}\nrounds: 3\n", 1)))
	f.Add([]byte(strings.Replace(good, "  rate: 100\n", "  rates: [0, 100]\n", 1)))
	f.Add([]byte(strings.Replace(good, "  rate: 100\n", "  rate: 0\n", 1)))
	m := thisMachine()
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := parse("fuzz.yaml", data, m)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.File != "fuzz.yaml" {
				t.Fatalf("error %q (%T) is not an *Error naming the file", err, err)
			}
			if strings.ContainsAny(err.Error(), "\r\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		checkValid(t, s, m)
	})
}

// checkValid checks what a scenario that Parse returns must hold,
// independently of how validation arrived at it.
func checkValid(t *testing.T, s *Scenario, m machine) {
	t.Helper()
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	if s.Rounds < 1 || s.Rounds > MaxRounds {
		t.Fatalf("rounds %d", s.Rounds)
	}
	if s.Workload() != WorkloadLoad {
		checkValidWorkload(t, s, m)
		return
	}
	if len(s.Services) < 1 || len(s.Services) > MaxServices || len(s.Variants) < 1 || len(s.Variants) > MaxVariants {
		t.Fatalf("%d services, %d variants", len(s.Services), len(s.Variants))
	}
	if _, ok := s.Variant(s.Baseline); !ok {
		t.Fatalf("no baseline %q", s.Baseline)
	}
	for _, svc := range s.Services {
		if len(svc.Command) == 0 || len(svc.Name) > MaxNameLen || !finite(svc.CPULimit) || svc.CPULimit < 0 || svc.MemoryLimit < 0 {
			t.Fatalf("service %+v", svc)
		}
		if m.memTotal > 0 && int64(svc.MemoryLimit) > m.memTotal || len(m.online) > 0 && svc.CPULimit > float64(len(m.online)) {
			t.Fatalf("service %s: limits beyond the machine: %v cores, %d bytes", svc.Name, svc.CPULimit, svc.MemoryLimit)
		}
		if svc.Ready.Timeout <= 0 {
			t.Fatalf("service %s: ready timeout %s", svc.Name, svc.Ready.Timeout)
		}
	}
	l := s.Load
	steps := l.Steps()
	if len(steps) < 1 || len(steps) > MaxSteps || s.Rounds*len(steps)*len(s.Variants) > MaxTrials {
		t.Fatalf("%d steps, %d rounds, %d variants", len(steps), s.Rounds, len(s.Variants))
	}
	for _, st := range steps {
		open := st.Users == 0 && !st.Idle && finite(st.Rate) && st.Rate > 0 && st.Rate <= MaxRate
		idle := st.Idle && st.Users == 0 && st.Rate == 0
		closed := st.Users > 0 && !st.Idle && (m.ports == 0 || st.Users <= m.ports)
		if !open && !idle && !closed {
			t.Fatalf("step %#v", st)
		}
	}
	if l.Duration <= 0 || l.Duration.D() > 24*60*60e9 || l.Warmup < 0 || l.Timeout <= 0 || l.MaxConns < 1 {
		t.Fatalf("load %+v", l)
	}
	if len(l.Requests) < 1 || len(l.Requests) > MaxRequests {
		t.Fatalf("%d requests", len(l.Requests))
	}
	for _, r := range l.Requests {
		if !strings.HasPrefix(r.Path, "/") || strings.ContainsFunc(r.Path, func(c rune) bool { return c <= ' ' || c >= 0x7f }) {
			t.Fatalf("request path %q", r.Path)
		}
		if r.Weight < 1 || len(r.Body) > MaxBody || !httpguts.ValidHeaderFieldName(r.Method) {
			t.Fatalf("request %+v", r)
		}
		for k, v := range r.Headers {
			if !httpguts.ValidHeaderFieldName(k) || !httpguts.ValidHeaderFieldValue(v) {
				t.Fatalf("header %q: %q", k, v)
			}
		}
	}
	fm := s.FindMax
	if !finite(fm.Start) || fm.Start <= 0 || fm.Start > MaxRate || !(fm.Precision >= 0.001 && fm.Precision < 1) || fm.MaxTrials < 2 || fm.SLOP99 <= 0 {
		t.Fatalf("find_max %+v", fm)
	}
	if s.Sample < Duration(MinSample) {
		t.Fatalf("sample %s", s.Sample)
	}
}

// checkValidWorkload checks what a start-up or job experiment that Parse
// returns must hold.
func checkValidWorkload(t *testing.T, s *Scenario, m machine) {
	t.Helper()
	n := s.Repetitions()
	if n < 1 || n > MaxRepetitions || n*len(s.Steps())*len(s.Variants) > MaxTrials || len(s.Variants) < 1 || len(s.Variants) > MaxVariants {
		t.Fatalf("%d repetitions, %d steps, %d variants", n, len(s.Steps()), len(s.Variants))
	}
	if s.Startup != nil {
		if s.Restart != RestartPerTrial || len(s.Services) < 1 {
			t.Fatalf("startup: restart %s, %d services", s.Restart, len(s.Services))
		}
		for _, c := range s.Startup.CPULimits {
			if !(c >= MinCPULimit) || len(m.online) > 0 && c > float64(len(m.online)) {
				t.Fatalf("startup: CPU limit %v", c)
			}
		}
	}
	if j := s.Job; j != nil {
		if len(j.Command) == 0 || j.Timeout <= 0 || j.Work < 0 || j.Per < 0 || s.Restart != RestartOnce {
			t.Fatalf("job %+v", j)
		}
	}
	if s.Sample < Duration(MinSample) {
		t.Fatalf("sample %s", s.Sample)
	}
}
