package profile

import (
	"os"
	"strings"
	"testing"
)

// raw is py-spy's raw output (--threads --subprocesses, and
// --full-filenames but for the third frame's, as py-spy shortens) of a Flask
// service without and with OpenTelemetry's middleware.
const raw = `process 7:"/v/bin/python /v/bin/waitress-serve app:app";thread (7);<module> (waitress-serve:8);wsgi_app (/v/lib/python3.12/site-packages/flask/app.py:1511);consumer (/work/examples/python/app.py:30) 40
process 7:"/v/bin/python /v/bin/waitress-serve app:app";thread (9);__call__ (/v/lib/python3.12/site-packages/opentelemetry/instrumentation/wsgi/__init__.py:560);end (/v/lib/python3.12/site-packages/opentelemetry/sdk/trace/__init__.py:950) 3
`

func TestParseRaw(t *testing.T) {
	var got []Stack
	if err := parseRaw(strings.NewReader(raw), func(s Stack) { got = append(got, s) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d stacks, want 2", len(got))
	}
	want := []string{"app:consumer", "flask.app:wsgi_app", "waitress-serve:<module>"}
	if s := got[0]; s.Thread != "thread (7)" || s.Count != 40 || len(s.Frames) != 3 {
		t.Fatalf("first stack = %+v", s)
	}
	for i, w := range want {
		if f := got[0].Frames[i]; f.Function != w {
			t.Errorf("frame %d = %q, want %q (leaf first)", i, f.Function, w)
		}
	}
	if f := got[1].Frames[0]; f.Function != "opentelemetry.sdk.trace:end" || got[1].Thread != "thread (9)" {
		t.Errorf("the agent's leaf = %+v on %q", f, got[1].Thread)
	}
	if err := parseRaw(strings.NewReader("thread (7);main (app.py:1)\n"), func(Stack) {}); err == nil {
		t.Error("a line without its count parsed")
	}
}

func TestPythonFrame(t *testing.T) {
	for _, c := range []struct{ fn, file, want string }{
		{"wsgi_app", "/v/lib/python3.12/site-packages/flask/app.py", "flask.app:wsgi_app"},
		{"decode", "/usr/lib/python3.12/json/decoder.py", "json.decoder:decode"},
		{"consumer", "/work/examples/python/app.py", "app:consumer"},
		{"full_dispatch_request", "flask/app.py", "flask.app:full_dispatch_request"},
		{"<module>", "", "<module>"},
	} {
		if got := pythonFrame(c.fn, c.file).Function; got != c.want {
			t.Errorf("pythonFrame(%q, %q) = %q, want %q", c.fn, c.file, got, c.want)
		}
	}
}

func TestRanSince(t *testing.T) {
	for _, tc := range []struct {
		name     string
		s, later sched
		want     uint64
	}{
		{"two threads", sched{1: 100, 2: 10}, sched{1: 300, 2: 110}, 300},
		{"a thread started since", sched{1: 100}, sched{1: 200, 2: 100}, 200},
		{"a thread that exited is left out", sched{1: 100, 2: 500}, sched{1: 200}, 100},
		{"a thread id used again", sched{1: 500}, sched{1: 20}, 0},
	} {
		if got := ranSince(tc.s, tc.later); got != tc.want {
			t.Errorf("%s: ranSince = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestSchedTimesReadsThisProcess checks that schedTimes reads a running
// process's threads: this test's own, which have run.
func TestSchedTimesReadsThisProcess(t *testing.T) {
	s := schedTimes([]int{os.Getpid()})
	var run uint64
	for _, v := range s {
		run += v
	}
	if len(s) == 0 || run == 0 {
		t.Errorf("schedTimes of this process = %v, want its threads with their run time", s)
	}
}
