package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/load"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/scenario"
	"github.com/tollperf/toll/torecord"
)

// loadFlags are the options of "toll load".
type loadFlags struct {
	rate     float64
	users    int
	think    time.Duration
	thinkExp bool
	ramp     time.Duration
	duration time.Duration
	warmup   time.Duration
	timeout  time.Duration
	maxConns int
	method   string
	headers  []string
	body     string
	jsonOut  bool
	profile  string
	quantum  time.Duration
	arrival  string
	seed     uint64
}

func newLoadCmd() *cobra.Command {
	var f loadFlags
	cmd := &cobra.Command{
		Use:   "load URL",
		Short: "Send load to one URL and print what it measured (toll's load generator on its own)",
		Long: `load runs toll's load generator against one URL, without services or
variants: an open model at a fixed --rate (latency from each request's intended
send time, so stalls show), or a closed model of --users that each send a
request, wait for its response and think. It prints a summary, or JSON with
--json, including the CPU time toll itself spent per request.

"${id}" in the URL, a header or the body is replaced by a per-request number.`,
		Example: `  toll load http://127.0.0.1:8080/ --rate 5000 --duration 10s
  toll load http://127.0.0.1:8080/ --users 50 --duration 10s --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkLoadFlags(cmd.Flags(), f); err != nil {
				return &exitError{code: ExitUsage, err: fmt.Errorf("load: %w", err)}
			}
			return runLoad(cmd, args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.Float64VarP(&f.rate, "rate", "r", 0, "open model: requests per second")
	fl.IntVarP(&f.users, "users", "u", 0, "closed model: concurrent users, one connection each")
	fl.DurationVar(&f.think, "think", 0, "closed model: think time between a response and the user's next request")
	fl.BoolVar(&f.thinkExp, "think-exponential", false, "closed model: draw think times from an exponential distribution with mean --think")
	fl.DurationVar(&f.ramp, "ramp", 0, "closed model: start users evenly over this long")
	fl.DurationVarP(&f.duration, "duration", "d", 10*time.Second, "measured window")
	fl.DurationVarP(&f.warmup, "warmup", "w", 0, "load sent before the measured window and not recorded")
	fl.DurationVar(&f.timeout, "timeout", 10*time.Second, "bound on each request")
	fl.StringVar(&f.arrival, "arrival", scenario.ArrivalUniform, "open model: arrival process, uniform (requests 1/rate apart) or poisson (exponential gaps of mean 1/rate)")
	fl.Uint64Var(&f.seed, "seed", 0, "open model: seed of --arrival poisson's draws (0: draw one, printed with --json)")
	fl.DurationVar(&f.quantum, "quantum", 0, "open model: release requests on a grid of this step, one scheduler wake-up per step, at the price of bursts whose queueing is in the latency (0: each at its own time)")
	fl.IntVar(&f.maxConns, "max-conns", 0, "open model: cap on requests in flight, and so on connections (default 500)")
	fl.StringVarP(&f.method, "method", "X", http.MethodGet, "HTTP method")
	fl.StringArrayVarP(&f.headers, "header", "H", nil, `request header "Name: value" (repeatable)`)
	fl.StringVar(&f.body, "body", "", "request body")
	fl.BoolVar(&f.jsonOut, "json", false, "print the result as JSON")
	fl.StringVar(&f.profile, "cpuprofile", "", "write a Go CPU profile of toll to this file")
	return cmd
}

// loadSummary is what "toll load --json" prints.
type loadSummary struct {
	Model string  `json:"model"` // "open" or "closed"
	Rate  float64 `json:"rate,omitempty"`
	Users int     `json:"users,omitempty"`
	// Arrival is the open model's arrival process, "uniform" or "poisson",
	// Seed the seed of Poisson's draws, and QuantumMS its release grid (0:
	// each request at its own time).
	Arrival   string  `json:"arrival,omitempty"`
	Seed      uint64  `json:"seed,omitempty"`
	QuantumMS float64 `json:"quantum_ms,omitempty"`
	DurationS float64 `json:"duration_s"`
	Scheduled uint64  `json:"scheduled"`
	Sent      uint64  `json:"sent"`
	Completed uint64  `json:"completed"`
	OK        uint64  `json:"ok"`
	Missed    uint64  `json:"missed"`
	Errors    uint64  `json:"errors"`
	// ErrorExamples says how the first failed request of each cause
	// failed, as a trial records it; absent when none failed.
	ErrorExamples *record.ErrorExamples `json:"error_examples,omitempty"`
	Throughput    float64               `json:"throughput"` // completed requests per second of the window
	// LatencyMS holds p50, p90, p99, p99.9 and max in milliseconds.
	LatencyMS map[string]float64 `json:"latency_ms"`
	// LatenessUS holds p50, p99 and max of how late requests were sent
	// after their due time, in microseconds (open model); LateArrivals is
	// set when its p99 is above analyze.LateArrivalLimit, as toll run flags
	// a trial late-arrivals.
	LatenessUS   map[string]float64 `json:"lateness_us,omitempty"`
	LateArrivals bool               `json:"late_arrivals,omitempty"`
	// CPUSeconds is the user+system CPU time toll spent during the whole
	// load (warm-up included); CPUMicrosPerRequest divides it by the
	// requests completed in the warm-up and the window.
	CPUSeconds          float64 `json:"cpu_seconds"`
	CPUMicrosPerRequest float64 `json:"cpu_us_per_request"`
	// Connections counts the connections toll opened, warm-up included.
	Connections uint64 `json:"connections"`
	// MaxRSSMiB is toll's peak resident set size.
	MaxRSSMiB float64 `json:"max_rss_mib"`
}

// checkLoadFlags refuses what toll run would refuse of the same values in
// a scenario, with the same bounds (package scenario), before any load.
func checkLoadFlags(fl *pflag.FlagSet, f loadFlags) error {
	for _, d := range []struct {
		flag, field string
		d           time.Duration
	}{
		{"duration", "load.duration", f.duration}, {"warmup", "load.warmup", f.warmup},
		{"timeout", "load.timeout", f.timeout}, {"quantum", "load.quantum", f.quantum},
		{"think", "load.think", f.think}, {"ramp", "load.ramp", f.ramp},
	} {
		if err := scenario.CheckDuration(d.field, d.d); err != nil {
			return fmt.Errorf("--%s: %w", d.flag, err)
		}
	}
	if f.duration == 0 {
		return errors.New("--duration 0s is not a window")
	}
	open, closed := fl.Changed("rate"), fl.Changed("users")
	switch {
	case open && closed:
		return errors.New("--rate (open model) and --users (closed model) exclude each other")
	case !open && !closed:
		return errors.New("give --rate N (open model) or --users N (closed model)")
	case open:
		if err := scenario.CheckRate(f.rate); err != nil {
			return fmt.Errorf("--rate: %w", err)
		}
		if f.rate*f.duration.Seconds() < 1 {
			return fmt.Errorf("--rate: %g req/s sends no request in a %s window", f.rate, f.duration)
		}
		if fl.Changed("max-conns") {
			if err := scenario.CheckMaxConns(f.maxConns); err != nil {
				return fmt.Errorf("--max-conns: %w", err)
			}
		}
		if err := scenario.CheckArrival(f.arrival); err != nil {
			return fmt.Errorf("--arrival: %w", err)
		}
		if fl.Changed("seed") && f.arrival != scenario.ArrivalPoisson {
			return errors.New("--seed applies to --arrival poisson only")
		}
		for _, name := range []string{"think", "think-exponential", "ramp"} {
			if fl.Changed(name) {
				return fmt.Errorf("--%s applies to the closed model only (--users)", name)
			}
		}
	case closed:
		if err := scenario.CheckUsers(f.users); err != nil {
			return fmt.Errorf("--users: %w", err)
		}
		for _, name := range []string{"quantum", "max-conns", "arrival", "seed"} {
			if fl.Changed(name) {
				return fmt.Errorf("--%s applies to the open model only (--rate)", name)
			}
		}
	}
	for _, h := range f.headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok {
			return fmt.Errorf("--header %q: want \"Name: value\"", h)
		}
		if err := scenario.CheckHeader(strings.TrimSpace(name), strings.TrimSpace(value)); err != nil {
			return fmt.Errorf("--header: %w", err)
		}
	}
	if err := scenario.CheckBody(len(f.body)); err != nil {
		return fmt.Errorf("--body: %w", err)
	}
	return nil
}

func runLoad(cmd *cobra.Command, url string, f loadFlags) error {
	req := load.Request{Name: "load", Method: f.method, URL: url, Body: []byte(f.body), Header: http.Header{}}
	for _, h := range f.headers {
		name, value, _ := strings.Cut(h, ":")
		req.Header.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	cfg := load.Config{
		Requests: []load.Request{req},
		Warmup:   f.warmup,
		Duration: f.duration,
		Timeout:  f.timeout,
		MaxConns: f.maxConns,
		Quantum:  f.quantum,
	}
	sum := loadSummary{DurationS: f.duration.Seconds()}
	if f.users == 0 {
		sum.Model, sum.Rate, sum.Arrival = "open", f.rate, f.arrival
		sum.QuantumMS = float64(f.quantum) / float64(time.Millisecond)
		cfg.Pacer = load.ConstantPacer{Rate: f.rate}
		if f.arrival == scenario.ArrivalPoisson {
			if sum.Seed = f.seed; sum.Seed == 0 {
				sum.Seed = rand.Uint64() | 1
			}
			cfg.Pacer = load.NewPoissonPacer(f.rate, sum.Seed)
		}
		cfg.Lull = load.Midway(load.Spacing(f.rate, f.quantum))
	} else {
		cfg.Users = &load.Users{N: f.users, Think: f.think, ExponentialThink: f.thinkExp, Ramp: f.ramp}
		sum.Model, sum.Users = "closed", f.users
	}

	if f.profile != "" {
		pf, err := os.Create(f.profile)
		if err != nil {
			return &exitError{code: ExitFailure, err: fmt.Errorf("load: %w", err)}
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return &exitError{code: ExitFailure, err: fmt.Errorf("load: cpu profile: %w", err)}
		}
		defer pprof.StopCPUProfile()
	}
	before := cpuTime()
	cfg.Start = time.Now()
	res, err := load.Run(cmd.Context(), cfg)
	if res == nil {
		return &exitError{code: ExitUsage, err: err}
	}
	cpu := cpuTime() - before
	sum.Scheduled, sum.Sent, sum.Completed, sum.OK = res.Scheduled, res.Sent, res.Completed, res.OK
	sum.Missed, sum.Errors, sum.Connections = res.Missed, res.Errors.Total(), res.Connections
	sum.ErrorExamples = torecord.ErrorExamples(res.ErrorExamples)
	// Over the window as it ran: an interrupted run's is shorter.
	if window := res.MeasureEnd.Sub(cfg.Start.Add(f.warmup)); window > 0 {
		sum.Throughput = float64(res.Completed) / window.Seconds()
	}
	sum.LatencyMS = latencyMS(res.Latency)
	if sum.Model == "open" && res.Lateness.TotalCount() > 0 {
		l := res.Lateness
		sum.LatenessUS = map[string]float64{"p50": float64(l.ValueAtQuantile(50)), "p99": float64(l.ValueAtQuantile(99)), "max": float64(l.Max())}
		sum.LateArrivals = sum.LatenessUS["p99"] > float64(analyze.LateArrivalLimit.Microseconds())
	}
	sum.CPUSeconds = cpu.Seconds()
	if n := res.Completed + res.WarmupCompleted; n > 0 {
		sum.CPUMicrosPerRequest = float64(cpu.Microseconds()) / float64(n)
	}
	sum.MaxRSSMiB = maxRSSMiB()

	out := cmd.OutOrStdout()
	if f.jsonOut {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if werr := enc.Encode(sum); werr != nil {
			return werr
		}
	} else {
		printLoadSummary(out, url, sum, res)
	}
	if err != nil {
		code := ExitFailure
		if errors.Is(err, cmd.Context().Err()) && cmd.Context().Err() != nil {
			code = ExitInterrupted
		}
		return &exitError{code: code, err: err}
	}
	// A window in which no request succeeded measured nothing: a script
	// reading the exit status must not take it for a load test that ran.
	if res.Sent > 0 && res.OK == 0 {
		return &exitError{code: ExitFailure, err: fmt.Errorf("load: every one of the %d requests sent failed (%d errors); the summary above says how", res.Sent, sum.Errors)}
	}
	return nil
}

// latencyMS returns the summary percentiles of h in milliseconds.
func latencyMS(h *hdr.Histogram) map[string]float64 {
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return map[string]float64{
		"p50":  ms(h.ValueAtQuantile(50)),
		"p90":  ms(h.ValueAtQuantile(90)),
		"p99":  ms(h.ValueAtQuantile(99)),
		"p999": ms(h.ValueAtQuantile(99.9)),
		"max":  ms(h.Max()),
	}
}

func printLoadSummary(w io.Writer, url string, s loadSummary, res *load.Result) {
	model := fmt.Sprintf("open model, %g req/s, %s arrivals", s.Rate, s.Arrival)
	if s.QuantumMS > 0 {
		model += fmt.Sprintf(" released on a %gms grid", s.QuantumMS)
	}
	if s.Model == "closed" {
		model = fmt.Sprintf("closed model, %d users", s.Users)
	}
	fmt.Fprintf(w, "\n  %s — %s, %s window\n\n", url, model, time.Duration(s.DurationS*float64(time.Second)))
	fmt.Fprintf(w, "  requests     %d scheduled, %d sent, %d completed, %d ok, %d missed\n", s.Scheduled, s.Sent, s.Completed, s.OK, s.Missed)
	e := res.Errors
	fmt.Fprintf(w, "  errors       %d (connect %d, timeout %d, 4xx %d, 5xx %d, other %d)\n", s.Errors, e.Connect, e.Timeout, e.HTTP4xx, e.HTTP5xx, e.Other)
	if x := s.ErrorExamples; x != nil {
		for _, c := range []struct{ cause, example string }{
			{"connect", x.Connect}, {"timeout", x.Timeout}, {"4xx", x.HTTP4xx}, {"5xx", x.HTTP5xx}, {"other", x.Other},
		} {
			if c.example != "" {
				fmt.Fprintf(w, "               first %s: %s\n", c.cause, c.example)
			}
		}
	}
	fmt.Fprintf(w, "  throughput   %.1f req/s over %d connections\n", s.Throughput, s.Connections)
	l := s.LatencyMS
	fmt.Fprintf(w, "  latency      p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  max %.3f ms\n", l["p50"], l["p90"], l["p99"], l["p999"], l["max"])
	if s.QuantumMS > 0 {
		fmt.Fprintf(w, "               (measured with a release grid of %gms: the requests due in each step are sent together, and the service's queueing of each burst is in the latency)\n", s.QuantumMS)
	}
	if l := s.LatenessUS; l != nil {
		fmt.Fprintf(w, "  lateness     p50 %.0f  p99 %.0f  max %.0f µs after each request's due time\n", l["p50"], l["p99"], l["max"])
		if s.LateArrivals {
			fmt.Fprintf(w, "               (late-arrivals: p99 above %s, so the generator's own lateness is in the latency; toll run flags such a trial)\n", analyze.LateArrivalLimit)
		}
	}
	if s.Model == "closed" {
		fmt.Fprintln(w, "               (closed model: a user waits for each response before its next request, so a stalled target is sent less and its latency understates the stall)")
	}
	fmt.Fprintf(w, "  toll's CPU   %.3f s, %.1f µs/request; max RSS %.1f MiB\n\n", s.CPUSeconds, s.CPUMicrosPerRequest, s.MaxRSSMiB)
}

// cpuTime returns the user+system CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// maxRSSMiB returns this process's peak resident set size in MiB.
func maxRSSMiB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) / 1024 // kilobytes on Linux
}
