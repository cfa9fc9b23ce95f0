package report

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/net/html"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
)

const evil = `<script>alert(1)</script>`

func htmlEncode(t *testing.T, vals []int64) string {
	t.Helper()
	h := hdr.New(1, 60_000_000, 3)
	for _, v := range vals {
		h.RecordValue(v)
	}
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// htmlTrial builds an n-second trial with 3 s of warm-up whose measured
// services use cpuPerReq CPU-seconds per request and answer in about latUS µs.
func htmlTrial(t *testing.T, idx, round int, variant string, n int, rate, cpuPerReq float64, latUS int64, jvm bool) *record.Trial {
	start := time.Unix(1000, 0)
	tr := &record.Trial{Index: idx, Round: round, Variant: variant, TargetRate: rate, PlannedS: float64(n),
		Start: start.Add(-3 * time.Second), MeasureStart: start, MeasureEnd: start.Add(time.Duration(n) * time.Second),
		Services: []record.ServiceRun{{Name: "app", Role: "app", Measured: true, Argv: []string{"java", evil}},
			{Name: "agent", Role: "agent", Measured: true}}}
	app := record.ServiceSeries{Service: "app", Source: "cgroup"}
	agent := record.ServiceSeries{Service: "agent", Source: "cgroup"}
	for s := -3; s <= n; s++ {
		wobble := 1 + 0.05*float64((s*7+round)%5)/5
		p := record.Sample{T: float64(s), CPU: 5 + float64(s+3)*rate*cpuPerReq*wobble, RSS: uint64(200+s+round) << 20, Threads: 20}
		if jvm {
			p.JVM = &record.JVMSample{HeapUsed: uint64(50+(s+3)%10*5) << 20}
		}
		app.Points = append(app.Points, p)
		agent.Points = append(agent.Points, record.Sample{T: float64(s), CPU: 1 + float64(s+3)*0.02, RSS: 30 << 20})
	}
	for s := 0; s < n; s++ {
		vals := make([]int64, int(rate))
		for i := range vals {
			vals[i] = latUS + int64(i%50)*latUS/40 + int64(s*10)
		}
		vals[0] = latUS * 20 // a tail
		tr.Intervals = append(tr.Intervals, record.Interval{T: float64(s), Scheduled: uint64(rate), Sent: uint64(rate),
			Completed: uint64(rate), OK: uint64(rate), Histogram: htmlEncode(t, vals)})
	}
	tr.Samples = []record.ServiceSeries{app, agent}
	tr.Target = "127.0.0.1:4321/" + variant // the expanded target (a URL's scheme would read as the network)
	return tr
}

func htmlFixture(t *testing.T) (*analyze.Summary, []*record.Trial) {
	t.Helper()
	heavy := "heavy " + evil
	m := &record.Manifest{Scenario: "petclinic " + evil, Baseline: "baseline", Variants: []string{"baseline", "otel", heavy},
		Rounds: 4, Mode: "sequential", Seed: 42, TrimStartS: 2, TrimEndS: 1, TollVersion: "v0.test", GoVersion: "go1.26",
		Command: []string{"toll", "run", evil}, Notes: []string{"note " + evil},
		Host:   record.Host{Name: "bench-1", OS: "linux", Arch: "amd64", Kernel: "6.12.0", CPUModel: "Test CPU", Cores: 16, MemoryBytes: 32 << 30},
		Layout: record.Layout{Cgroup: "v2", LoadCPUs: "0-3", ServiceCPUs: "4-15"},
		Load:   record.LoadSettings{Model: "open", Rates: []float64{100}, WarmupS: 3, DurationS: 12}}
	noise := []float64{1.0, 1.03, 0.97, 1.01}
	var trials []*record.Trial
	idx := 0
	for r := 1; r <= 4; r++ {
		for _, v := range []struct {
			name string
			cpu  float64
			lat  int64
			jvm  bool
		}{{"baseline", 0.001, 1000, true}, {"otel", 0.0012, 1100, true}, {heavy, 0.0009, 900, false}} {
			idx++
			trials = append(trials, htmlTrial(t, idx, r, v.name, 12, 100, v.cpu*noise[r-1], v.lat, v.jvm))
		}
	}
	s, err := analyze.Summarize(m, trials, analyze.Options{Trim: analyze.Trim{Start: 2, End: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return s, trials
}

func renderHTML(t *testing.T) []byte {
	t.Helper()
	s, _ := htmlFixture(t)
	var b bytes.Buffer
	if err := HTML(&b, s); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// walk calls f on every element node under n.
func walk(n *html.Node, f func(*html.Node)) {
	if n.Type == html.ElementNode {
		f(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// checkSVGs parses page and returns the labels of its <svg> elements,
// failing when one has no drawn polyline, rect or circle.
func checkSVGs(t *testing.T, page []byte) []string {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	var labels []string
	walk(doc, func(e *html.Node) {
		if e.Data == "script" {
			t.Error("found a <script> element")
		}
		if e.Data != "svg" {
			return
		}
		labels = append(labels, attr(e, "aria-label"))
		drawn := 0
		walk(e, func(c *html.Node) {
			switch c.Data {
			case "polyline":
				if strings.Count(attr(c, "points"), ",") >= 2 {
					drawn++
				}
			case "rect":
				if attr(c, "width") != "" && attr(c, "width") != "0.0" {
					drawn++
				}
			case "circle":
				drawn++
			}
		})
		if drawn == 0 {
			t.Errorf("svg %q draws nothing", attr(e, "aria-label"))
		}
	})
	return labels
}

// wantCharts are charts the fixture's page must hold: the Δ% chart, a dot
// plot of CPU per request's rounds, the six per-second charts and the
// spectrum.
var wantCharts = []string{"Δ% vs baseline with 95% intervals", "otel: CPU per request:", "CPU of measured services",
	"RSS of measured services", "JVM heap used", "Latency p50", "Latency p99", "Achieved rate", "Latency by percentile"}

// checkCharts fails unless every chart of wantCharts is among labels.
func checkCharts(t *testing.T, labels []string) {
	t.Helper()
	for _, want := range wantCharts {
		found := false
		for _, l := range labels {
			found = found || strings.HasPrefix(l, want)
		}
		if !found {
			t.Errorf("no chart %q among %q", want, labels)
		}
	}
}

func TestHTMLReport(t *testing.T) {
	page := renderHTML(t)
	checkCharts(t, checkSVGs(t, page))
	s := string(page)
	if strings.Contains(strings.ToLower(s), "<script") {
		t.Error(`output contains "<script"`)
	}
	if !strings.Contains(s, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("escaped user string not found")
	}
	for _, want := range []string{"bench-1", "6.12.0", "Test CPU", "v2", "4-15", "v0.test", "warm-up", "trimmed", "127.0.0.1:4321/otel",
		`class="chg up`, "99.99%", "Latency p99", "JVM heap used", "<polyline"} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(s, "http://") && strings.Count(s, "http://") != strings.Count(s, "http://www.w3.org/2000/svg") {
		t.Error("report refers to the network")
	}
	// HTML renders the page of a run's analysis: its footer said "from
	// summary.json alone" on the run's own report too.
	if strings.Contains(s, "summary.json alone") || !strings.Contains(s, "Generated by toll from its analysis of the run's trials") {
		t.Error("the footer does not say what the page was generated from")
	}
	if dir := os.Getenv("TOLL_HTML_OUT"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "report.html"), page, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func chromiumFlags(tmp string) []string {
	return []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + filepath.Join(tmp, "profile"), "--enable-logging=stderr", "--v=0"}
}

// TestHTMLInChromium renders the report in headless Chromium: it must take a
// screenshot without console errors, and its SVGs must survive in the DOM.
func TestHTMLInChromium(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not on PATH (apt-get install -y chromium); skipping the browser test")
	}
	tmp := t.TempDir()
	path := filepath.Join(tmp, "report.html")
	if err := os.WriteFile(path, renderHTML(t), 0o644); err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("TOLL_HTML_OUT"); dir != "" {
		tmp = dir
	}
	shot := filepath.Join(tmp, "shot.png")
	run := func(extra ...string) (stdout, stderr string) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		args := append(chromiumFlags(t.TempDir()), extra...)
		args = append(args, "file://"+path)
		cmd := exec.CommandContext(ctx, bin, args...)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		if err := cmd.Run(); err != nil {
			t.Fatalf("chromium %v: %v\n%s", extra, err, e.String())
		}
		return o.String(), e.String()
	}
	_, stderr := run("--screenshot="+shot, "--window-size=1280,2400")
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, "Uncaught") || strings.Contains(line, "CONSOLE") && strings.Contains(strings.ToLower(line), "error") {
			t.Errorf("console error: %s", line)
		}
	}
	st, err := os.Stat(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, stderr)
	}
	if st.Size() < 20_000 {
		t.Errorf("screenshot is only %d bytes", st.Size())
	}
	t.Logf("screenshot %s (%d bytes)", shot, st.Size())
	dom, _ := run("--dump-dom")
	if got, want := len(checkSVGs(t, []byte(dom))), len(checkSVGs(t, renderHTML(t))); got != want {
		t.Errorf("%d <svg> elements in the rendered DOM, want %d", got, want)
	}
}

// TestFirstScreenHoldsTheAnswer renders the page in headless Chromium in a
// 1280×900 window (a laptop's screen): the headline and the Δ% chart must lie wholly on that
// first screen, headline first. The probe script is the test's, added to
// a copy of the page (the report itself has none).
func TestFirstScreenHoldsTheAnswer(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not on PATH (apt-get install -y chromium); skipping the browser test")
	}
	const probe = `<script>
(function(){
  var h = document.querySelector(".headline"), c = document.querySelector("svg.chart");
  var out = {screen: window.innerHeight, width: window.innerWidth};
  if (h) { out.headline = h.getBoundingClientRect().bottom; out.headlineTop = h.getBoundingClientRect().top; }
  if (c) { out.chart = c.getBoundingClientRect().bottom; out.chartTop = c.getBoundingClientRect().top; out.label = c.getAttribute("aria-label"); }
  var p = document.createElement("pre"); p.id = "probe"; p.textContent = JSON.stringify(out);
  document.body.appendChild(p);
})();
</script></body>`
	page := strings.Replace(string(renderHTML(t)), "</body>", probe, 1)
	tmp := t.TempDir()
	path := filepath.Join(tmp, "report.html")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := append(chromiumFlags(t.TempDir()), "--window-size=1280,900", "--dump-dom", "file://"+path)
	var o, e bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, e.String())
	}
	_, rest, ok := strings.Cut(o.String(), `<pre id="probe">`)
	js, _, _ := strings.Cut(rest, "</pre>")
	if !ok {
		t.Fatalf("no probe in the rendered DOM:\n%s", e.String())
	}
	var got struct {
		Screen, Width                          float64
		Headline, HeadlineTop, Chart, ChartTop float64
		Label                                  string
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(js)), &got); err != nil {
		t.Fatalf("probe %s: %v", js, err)
	}
	t.Logf("probe: %+v", got)
	if got.Screen < 700 || got.Headline == 0 || got.Chart == 0 {
		t.Fatalf("probe %+v: no screen, headline or chart", got)
	}
	if !strings.Contains(got.Label, "Δ%") {
		t.Errorf("the first chart is %q, want the Δ%% chart", got.Label)
	}
	if got.HeadlineTop > got.ChartTop {
		t.Errorf("the Δ%% chart (top %.0f) comes before the headline (top %.0f)", got.ChartTop, got.HeadlineTop)
	}
	if got.Headline > got.Screen || got.Chart > got.Screen {
		t.Errorf("headline ends at %.0f px and the Δ%% chart at %.0f px: not on the first %.0f px screen", got.Headline, got.Chart, got.Screen)
	}
}
