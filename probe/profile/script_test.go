package profile

import (
	"os"
	"strings"
	"testing"
)

func TestParseScript(t *testing.T) {
	f, err := os.Open("testdata/script.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []scriptSample
	if err := parseScript(f, func(s scriptSample) { got = append(got, s) }); err != nil {
		t.Fatal(err)
	}
	if len(got) < 3 {
		t.Fatalf("%d samples, want several", len(got))
	}
	first := got[0]
	if first.thread != "compile" || first.period != 1003009 || first.ns != 3371076238810 {
		t.Errorf("first sample = %+v", first)
	}
	if f := first.frames[0]; f.Function != "runtime.gcFlushBgCredit" || f.Module != "compile" {
		t.Errorf("leaf = %+v, want runtime.gcFlushBgCredit in compile", f)
	}
	last := got[len(got)-1]
	if last.thread != "C2 CompilerThre" || last.ns != 3371100000000 {
		t.Errorf("a thread name with a space: %+v", last)
	}
	if f := last.frames[0]; f.Function != "[unknown libjvm.so]" {
		t.Errorf("an unnamed frame = %+v, want it named after its module", f)
	}
	if f := last.frames[1]; f.Function != "Compile::Optimize()" || f.Module != "libjvm.so" {
		t.Errorf("a symbol with parentheses = %+v", f)
	}
	kernel := false
	for _, s := range got {
		for _, f := range s.frames {
			kernel = kernel || f.Kernel()
		}
	}
	if !kernel {
		t.Error("no kernel frame read from a system-wide recording")
	}
}

func TestParseScriptRejectsOtherOutput(t *testing.T) {
	err := parseScript(strings.NewReader("compile 1 not-a-time: 5\n"), func(scriptSample) {})
	if err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("err = %v, want one naming line 1", err)
	}
}

// TestParseScriptProcess reads the process ID perf script prints before
// the thread's with -F comm,pid,tid,...: what a recording of every CPU is
// filtered by.
func TestParseScriptProcess(t *testing.T) {
	const out = "            java 4242/4250  3371.076238810:    1003009 \n" +
		"\t           39904 Main.work (/tmp/perf-4242.map)\n\n" +
		"C2 CompilerThre 4242/4251  3371.100000000:    1003009 \n" +
		"\t           1a2b Compile::Optimize() (/usr/lib/jvm/lib/server/libjvm.so)\n\n" +
		"         swapper     0/0  3371.100100000:    1003009 \n" +
		"\t        ffffffff81000000 default_idle ([kernel.kallsyms])\n\n" +
		// A task perf could not name, in a recording of every CPU.
		"             :-1 16908/-1    3371.100200000:    1003009 \n" +
		"\t        ffffffff81000000 do_exit ([kernel.kallsyms])\n"
	var got []scriptSample
	if err := parseScript(strings.NewReader(out), func(s scriptSample) { got = append(got, s) }); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		thread string
		pid    int
	}{{"java", 4242}, {"C2 CompilerThre", 4242}, {"swapper", 0}, {":-1", 16908}}
	if len(got) != len(want) {
		t.Fatalf("%d samples, want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].thread != w.thread || got[i].pid != w.pid {
			t.Errorf("sample %d: thread %q of process %d, want %q of %d", i, got[i].thread, got[i].pid, w.thread, w.pid)
		}
	}
	if got[1].ns != 3371100000000 {
		t.Errorf("time %d, want 3371100000000", got[1].ns)
	}
}
