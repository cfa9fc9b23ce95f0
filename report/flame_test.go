package report

import (
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
)

func TestFlameSVG(t *testing.T) {
	const start, mw = "go.opentelemetry.io/otel/sdk/trace.(*tracer).Start", "otelhttp.(*middleware).serveHTTP"
	d := analyze.ProfileDiff{Variant: "otel", Flame: &analyze.FlameNode{Name: "all", Baseline: 1.5, Variant: 2.1, Children: []*analyze.FlameNode{
		{Name: "main.main", Baseline: 1.5, Variant: 2.1, FunctionBaseline: 1.5, FunctionVariant: 2.1, Children: []*analyze.FlameNode{
			{Name: "main.handle", Baseline: 1, Variant: 0.9, FunctionBaseline: 1, FunctionVariant: 0.9},
			{Name: start, Baseline: 0, Variant: 0.6, FunctionBaseline: 0, FunctionVariant: 0.6},
			// The application's work, moved under the agent's wrapper: a
			// new stack, an unchanged function.
			{Name: mw, Baseline: 0, Variant: 0.6, FunctionBaseline: 0, FunctionVariant: 0.6, Children: []*analyze.FlameNode{
				{Name: "app.work", Baseline: 0, Variant: 0.5, FunctionBaseline: 0.5, FunctionVariant: 0.5},
			}},
		}},
	}}}
	svg := string(flameSVG(d))
	for _, want := range []string{`class="flame"`, "main.handle", "(*tracer).Start", "rgb(235,60,60)", "rgb(", "Δ +0.6000 ms"} {
		if !strings.Contains(svg, want) {
			t.Errorf("flame graph lacks %q:\n%s", want, svg)
		}
	}
	fill := func(name string) string {
		i := strings.Index(svg, "<title>"+name)
		if i < 0 {
			t.Fatalf("no frame %s:\n%s", name, svg)
		}
		f := strings.Index(svg[i:], `fill="`)
		return svg[i+f+6 : i+f+strings.Index(svg[i+f+6:], `"`)+6]
	}
	// The span's frame, the largest growth, is the reddest; handle, which
	// shrank, is blue; the application's work under the wrapper, unchanged
	// over all its stacks, is neither.
	if c := fill(start); c != "rgb(235,60,60)" {
		t.Errorf("the largest growth is %s, want the reddest", c)
	}
	if c := fill("main.handle"); !strings.HasSuffix(c, ",235)") || strings.HasPrefix(c, "rgb(235,") {
		t.Errorf("a frame that shrank is %s, want blue", c)
	}
	if c := fill("app.work"); c != "rgb(235,235,235)" {
		t.Errorf("an unchanged function on a new stack is %s, want no colour", c)
	}
	if flameSVG(analyze.ProfileDiff{Variant: "x"}) != "" {
		t.Error("a flame graph without stacks")
	}
}

// TestFlameSection checks where report.html puts a flame graph: under a
// heading of its own that names it, in an element whose id names the
// variant (and the step, when the variant was profiled at several), not
// under another chart's heading.
func TestFlameSection(t *testing.T) {
	flame := &analyze.FlameNode{Name: "all", Baseline: 1, Variant: 1.5, Children: []*analyze.FlameNode{
		{Name: "main.main", Baseline: 1, Variant: 1.5},
	}}
	tests := []struct {
		name  string
		steps []int
		ids   []string
	}{
		{name: "one step", steps: []int{0}, ids: []string{"flame-otel"}},
		{name: "two steps", steps: []int{0, 1}, ids: []string{"flame-otel-step0", "flame-otel-step1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := profiledSummary(map[string]float64{"main.main": 0.5}, 0.1)
			s.Manifest = &record.Manifest{}
			s.Profiles[0].Flame = flame
			for _, st := range tt.steps[1:] {
				d := s.Profiles[0]
				d.Step = st
				s.Profiles = append(s.Profiles, d)
			}
			var b strings.Builder
			if err := HTML(&b, s); err != nil {
				t.Fatal(err)
			}
			page := b.String()
			if n := strings.Count(page, `class="flame"`); n != len(tt.ids) {
				t.Fatalf("%d flame graphs, want %d", n, len(tt.ids))
			}
			rest := page
			for _, id := range tt.ids {
				i := strings.Index(rest, `id="`+id+`"`)
				if i < 0 {
					t.Fatalf("no element with id %q:\n%s", id, page)
				}
				rest = rest[i:]
				j := strings.Index(rest, `class="flame"`)
				head := rest[:j]
				if !strings.Contains(head, "<h3>Differential flame graph: otel") {
					t.Errorf("flame graph %s is not under its own heading: %q", id, head)
				}
				if strings.Contains(head, "Per second") {
					t.Errorf("flame graph %s is under the per-second charts' heading: %q", id, head)
				}
				rest = rest[j:]
			}
		})
	}
}

// TestScreenshotSection runs scripts/screenshot.sh with an element's id:
// the PNG it saves must show that element at the top of the window, here
// the flame graph's reddest frame, which the top of the whole page at the same
// size does not reach.
func TestScreenshotSection(t *testing.T) {
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Skip("chromium is not on PATH (apt-get install -y chromium); skipping the browser test")
	}
	script, err := filepath.Abs("../scripts/screenshot.sh")
	if err != nil {
		t.Fatal(err)
	}
	s := profiledSummary(map[string]float64{"main.main": 0.5}, 0.1)
	s.Manifest = &record.Manifest{}
	s.Profiles[0].Flame = &analyze.FlameNode{Name: "all", Baseline: 1, Variant: 1.5, Children: []*analyze.FlameNode{
		{Name: "main.main", Baseline: 0.5, Variant: 1.5, FunctionBaseline: 0.5, FunctionVariant: 1.5},
	}}
	dir := t.TempDir()
	var b strings.Builder
	if err := HTML(&b, s); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "report.html"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	shoot := func(args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "sh", append([]string{script, dir}, args...)...)
		cmd.Env = append(os.Environ(), "WINDOW_SIZE=800,200")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("screenshot.sh %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	// reddest counts the pixels of the reddest frame's fill.
	reddest := func(path string) int {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		img, err := png.Decode(f)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		n := 0
		r := img.Bounds()
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				cr, cg, cb, _ := img.At(x, y).RGBA()
				if cr>>8 == 235 && cg>>8 == 60 && cb>>8 == 60 { // flameColor of the largest growth
					n++
				}
			}
		}
		return n
	}
	whole := shoot()
	if got, want := whole, filepath.Join(dir, "report.png"); got != want {
		t.Errorf("screenshot.sh DIR saved %q, want %q", got, want)
	}
	section := shoot("flame-otel")
	if got, want := section, filepath.Join(dir, "report-flame-otel.png"); got != want {
		t.Fatalf("screenshot.sh DIR flame-otel saved %q, want %q", got, want)
	}
	if n := reddest(section); n < 1000 {
		t.Errorf("the flame graph's screenshot has %d red pixels: the graph is not on it", n)
	}
	if n := reddest(whole); n > 0 {
		t.Errorf("the page's top has %d red pixels at 800×200: the test cannot tell the section from the page", n)
	}
}

// TestProfileTableIntervalOnce checks that report.html's profile tables,
// which have a column for the 95% interval, do not show it a second time
// under the change.
func TestProfileTableIntervalOnce(t *testing.T) {
	s := profiledSummary(map[string]float64{"main.main": 0.5}, 0.1)
	s.Manifest = &record.Manifest{}
	var b strings.Builder
	if err := HTML(&b, s); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bounds := range []string{"[&#43;0.4000, &#43;0.6000]"} { // as html/template writes it
		// Once in each row that has it: the function's, the total's and
		// the origin's (the fixture has no causes).
		if n, want := strings.Count(page, bounds), 3; n != want {
			t.Errorf("%s is on the page %d times, want %d (once per row):\n%s", bounds, n, want, page)
		}
	}
	if !strings.Contains(page, "<th>95% interval</th>") {
		t.Error("the profile tables have no interval column")
	}
}
