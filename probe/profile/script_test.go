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
