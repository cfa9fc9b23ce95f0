package profile

import (
	"strings"
	"testing"
	"time"
)

// trace is py-spy's Chrome trace (--threads --subprocesses) of one thread
// in flask's dispatch, then in opentelemetry's span end, then idle.
const trace = `[
{"args":{"filename":"","line":0},"cat":"py-spy","name":"process 7:\"python app.py\"","ph":"B","pid":7,"tid":1,"ts":0},
{"args":{"filename":"","line":0},"cat":"py-spy","name":"thread (7)","ph":"B","pid":7,"tid":1,"ts":0},
{"args":{"filename":"/v/lib/python3.12/site-packages/flask/app.py","line":9},"cat":"py-spy","name":"wsgi_app","ph":"B","pid":7,"tid":1,"ts":0},
{"args":{"filename":"/v/lib/python3.12/site-packages/flask/app.py","line":9},"cat":"py-spy","name":"wsgi_app","ph":"E","pid":7,"tid":1,"ts":1500000},
{"args":{"filename":"/v/lib/python3.12/site-packages/opentelemetry/sdk/trace/__init__.py","line":3},"cat":"py-spy","name":"end","ph":"B","pid":7,"tid":1,"ts":1500000},
{"args":{"filename":"/v/lib/python3.12/site-packages/opentelemetry/sdk/trace/__init__.py","line":3},"cat":"py-spy","name":"end","ph":"E","pid":7,"tid":1,"ts":2500000},
{"args":{"filename":"","line":0},"cat":"py-spy","name":"thread (7)","ph":"E","pid":7,"tid":1,"ts":2500000},
{"args":{"filename":"","line":0},"cat":"py-spy","name":"process 7:\"python app.py\"","ph":"E","pid":7,"tid":1,"ts":2500000}
]`

// TestParseChromeTrace checks that each span of py-spy's trace counts as
// the CPU time it lasted within the window, under its frames named
// module:function and the second it fell in.
func TestParseChromeTrace(t *testing.T) {
	start := time.Unix(1000, 0)
	// The window [0.5 s, 2.25 s): 1 s of wsgi_app, 0.75 s of end.
	w := Window{Start: start.Add(500 * time.Millisecond), End: start.Add(2250 * time.Millisecond)}
	cpu := map[string]int64{}
	seconds := map[int64]int64{}
	err := parseChromeTrace(strings.NewReader(trace), start, w, int64(10*time.Millisecond), func(s Stack) {
		if s.Thread != "thread (7)" || len(s.Frames) != 1 {
			t.Errorf("stack %+v, want one frame on thread (7)", s)
		}
		cpu[s.Frames[0].Function] += s.CPU
		seconds[s.Second] += s.CPU
	})
	if err != nil {
		t.Fatal(err)
	}
	ms := int64(time.Millisecond)
	if cpu["flask.app:wsgi_app"] != 1000*ms || cpu["opentelemetry.sdk.trace:end"] != 750*ms || len(cpu) != 2 {
		t.Errorf("CPU by function = %v, want flask.app:wsgi_app 1 s and opentelemetry.sdk.trace:end 0.75 s", cpu)
	}
	if seconds[0] != 1000*ms || seconds[1] != 750*ms {
		t.Errorf("CPU by second = %v, want 0: 1 s, 1: 0.75 s", seconds)
	}
}

func TestPythonFrame(t *testing.T) {
	for _, c := range []struct{ fn, file, want string }{
		{"wsgi_app", "/v/lib/python3.12/site-packages/flask/app.py", "flask.app:wsgi_app"},
		{"decode", "/usr/lib/python3.12/json/decoder.py", "json.decoder:decode"},
		{"consumer", "/work/examples/python/app.py", "app:consumer"},
		{"<module>", "", "<module>"},
	} {
		if got := pythonFrame(c.fn, c.file).Function; got != c.want {
			t.Errorf("pythonFrame(%q, %q) = %q, want %q", c.fn, c.file, got, c.want)
		}
	}
}
