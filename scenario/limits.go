package scenario

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/net/http/httpguts"
)

// Toll's bounds on a scenario. Each keeps a value that no real run needs
// from hanging toll or exhausting the machine; the error for a value beyond
// one says why the bound is where it is.
const (
	// MaxFileSize bounds a scenario file: a scenario is a few KiB of YAML
	// (the largest example, 6 KiB), and reading one takes up to about 160
	// times its size in memory (a 1 MiB list of services: 160 MiB).
	MaxFileSize = 1 << 20
	// MaxRate bounds the rate of one open-model load step, in requests per
	// second: toll's one load generator, on one CPU, sends at most about
	// GeneratorRate, so a step beyond this would measure nothing but
	// missed requests.
	MaxRate = 1_000_000
	// GeneratorRate is about the most requests per second toll's load
	// generator sends on one CPU (docs/benchmarks.md: 137,000 against one
	// nginx worker).
	GeneratorRate = 140_000
	// MaxRounds bounds rounds, and MaxTrials the trials of a run (rounds ×
	// load steps × variants): the plan holds every action in memory.
	MaxRounds = 10_000
	MaxTrials = 100_000
	// MaxServices, MaxVariants, MaxRequests and MaxSteps bound the lists of
	// a scenario. With restart: once every variant's services run side by
	// side, each variant with a telemetry sink of its own.
	MaxServices = 64
	MaxVariants = 64
	MaxRequests = 100
	// MaxReadyLog bounds a ready.log regular expression, which is matched
	// against each line a service writes until it is ready.
	MaxReadyLog = 1024
	MaxSteps    = 100
	// MaxScrapeMetrics bounds the metrics a service's scrape keeps: each
	// becomes a row of every report.
	MaxScrapeMetrics = 50
	// MaxWeights bounds the sum of the request mix's weights: the load
	// generator keeps one period of the mix, a weight-sum of entries.
	MaxWeights = 10_000
	// MaxBody bounds a request body: every connection renders its request
	// into a buffer of its own, so max_conns connections hold max_conns
	// copies.
	MaxBody = 64 << 10
	// MaxNameLen bounds the names of the scenario, services and variants,
	// which become parts of file and cgroup names (at most 255 bytes).
	MaxNameLen = 64
	// MaxImageLen bounds an image reference: Docker's and Podman's own
	// limit on a reference's length.
	MaxImageLen = 255
	// MaxPorts bounds a container's published ports: each is a listener
	// its engine holds on the host, per variant.
	MaxPorts = 16
	// MaxRequestNameLen bounds a request's name, a row label in reports.
	MaxRequestNameLen = 200
	// MinCPULimit is the smallest cpu_limit: the kernel's smallest CPU quota,
	// 1 ms per toll's 100 ms period.
	MinCPULimit = 0.01
	// MinMemoryLimit is the smallest memory_limit: less does not hold a
	// process's own binary and stacks.
	MinMemoryLimit = 1 << 20
	// MinJITWindow is the shortest window a variant warm-up's JIT rate is
	// taken over (load.variant_warmup_until.over): the counters are read
	// once a second, and a rate needs several readings.
	MinJITWindow = 2 * time.Second
	// fdReserve is the file descriptors toll keeps, beyond its load
	// generator's, for its sinks, logs, probes and cgroup files.
	fdReserve = 256
)

// durationLimit returns the range of the duration field (a dotted path such
// as "load.duration"), and why its upper end is there.
func durationLimit(field string) (lo, hi time.Duration, why string) {
	const day = 24 * time.Hour
	switch field {
	case "load.duration", "load.warmup", "load.variant_warmup", "load.ramp":
		return 0, day, "a trial longer than a day is a mistake, and every trial of a run has it"
	case "load.timeout":
		return time.Millisecond, time.Minute, "latencies are recorded up to 60s"
	case "load.variant_warmup_until.jit_below":
		return time.Microsecond, time.Second, "it is JIT time per second of wall time, and a second a second is a whole core compiling"
	case "load.variant_warmup_until.over":
		return MinJITWindow, time.Hour, "a JVM's compilation is read once a second, and a window longer than an hour never ends a warm-up of at most a day"
	case "find_max.slo_p99":
		return time.Millisecond, time.Minute, "latencies are recorded up to 60s"
	case "load.think":
		return 0, time.Hour, "a user that thinks longer sends almost nothing"
	case "load.quantum":
		return 0, time.Second, "requests are counted by the second, and a grid step must fit in one"
	case "load.slice":
		return MinSlice, time.Second / 2, "requests are counted by the second, and each second must hold a whole turn of both sides"
	case "sample":
		return MinSample, time.Hour, "a run needs samples within each trial's window"
	case "trim.start", "trim.end":
		return 0, day, "a trim cannot exceed the window, which is at most a day"
	case "job.timeout":
		return time.Millisecond, day, "a job is timed to the millisecond, and one that runs longer than a day is a mistake repeated every repetition"
	}
	if strings.HasSuffix(field, ".scrape.timeout") {
		return time.Millisecond, 30 * time.Second, "a scrape runs at each window's start and end, and a window's edge cannot wait longer"
	}
	// services[i].ready.timeout
	return time.Millisecond, day, "a service that is not ready within a day will not be"
}

// CheckDuration returns why d cannot be the duration field (a dotted path
// such as "load.duration", "load.timeout" or "services[0].ready.timeout"),
// or nil.
func CheckDuration(field string, d time.Duration) error {
	lo, hi, why := durationLimit(field)
	switch {
	case d < 0:
		return fmt.Errorf("%s is negative", d)
	case d < lo:
		return fmt.Errorf("%s is below the least of %s", d, lo)
	case d > hi:
		return fmt.Errorf("%s is above toll's limit of %s: %s", d, hi, why)
	}
	return nil
}

// CheckArrival returns why arrival cannot be the open model's arrival
// process, or nil.
func CheckArrival(arrival string) error {
	switch arrival {
	case ArrivalUniform, ArrivalPoisson:
		return nil
	}
	return fmt.Errorf("%q is not one of %s (requests 1/rate apart) or %s (exponential gaps of mean 1/rate, as from many independent users)", arrival, ArrivalUniform, ArrivalPoisson)
}

// CheckRate returns why rate cannot be the rate of an open-model load step
// (requests per second), or nil.
func CheckRate(rate float64) error {
	switch {
	case math.IsNaN(rate) || math.IsInf(rate, 0):
		return fmt.Errorf("%v is not a number of requests per second", rate)
	case rate <= 0:
		return fmt.Errorf("%s req/s is not positive", fmtFloat(rate))
	case rate > MaxRate:
		return fmt.Errorf("%s req/s is above toll's limit of %d req/s: one load generator on one CPU sends at most about %d req/s (docs/benchmarks.md)", fmtFloat(rate), MaxRate, GeneratorRate)
	}
	return nil
}

// CheckUsers returns why n closed-model users cannot run on this machine,
// or nil. Each user holds a connection to the target and a timer.
func CheckUsers(n int) error { return checkConns(thisMachine(), n, 1, 2, "users") }

// CheckMaxConns returns why an open-model load generator cannot hold n
// connections on this machine, or nil.
func CheckMaxConns(n int) error { return checkConns(thisMachine(), n, 1, 1, "connections") }

// checkConns checks that generators load generators, each with n users or
// connections (what) holding fds file descriptors apiece, fit within the
// process's file descriptors and the local ports of one target address.
func checkConns(m machine, n, generators, fds int, what string) error {
	if n <= 0 {
		return fmt.Errorf("%d %s: must be at least 1", n, what)
	}
	both := ""
	if generators > 1 {
		both = fmt.Sprintf(" (×%d: the variants run at once have %d load generators)", generators, generators)
	}
	total := uint64(n) * uint64(generators)
	if m.ports > 0 && total > uint64(m.ports) {
		return fmt.Errorf("%d %s%s each hold a connection to the target, more than the %d local ports a connection to one address can use (net.ipv4.ip_local_port_range %s)", n, what, both, m.ports, m.portRange)
	}
	need := total*uint64(fds) + fdReserve
	if m.noFile > 0 && need > m.noFile {
		per := "a connection"
		if fds > 1 {
			per = "a connection and a timer"
		}
		return fmt.Errorf("%d %s%s need %d file descriptors (%s each, and %d for toll's sinks, logs and probes), more than this process may open (RLIMIT_NOFILE %d); raise the limit (ulimit -n) or lower the number", n, what, both, need, per, fdReserve, m.noFile)
	}
	return nil
}

// CheckHeader returns why name: value cannot be a request header, or nil.
func CheckHeader(name, value string) error {
	if !httpguts.ValidHeaderFieldName(name) {
		return fmt.Errorf("%q is not a header name (letters, digits and !#$%%&'*+-.^_`|~ only)", name)
	}
	if !httpguts.ValidHeaderFieldValue(value) {
		return fmt.Errorf("the value of %s holds a line break or another control character", name)
	}
	switch http.CanonicalHeaderKey(name) {
	case "Content-Length", "Transfer-Encoding", "Connection":
		return fmt.Errorf("%s is set by toll's load generator, which sends bodies with a Content-Length on keep-alive connections", name)
	}
	return nil
}

// CheckBody returns why a request body of n bytes cannot be sent, or nil.
func CheckBody(n int) error {
	if n > MaxBody {
		return fmt.Errorf("%d bytes is above toll's limit of %d KiB: every connection holds a copy of its request", n, MaxBody>>10)
	}
	return nil
}

// checkPath returns why p cannot be the path (and query) of a request.
func checkPath(p string) error {
	if len(p) == 0 || p[0] != '/' {
		return fmt.Errorf("%q must start with /", p)
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c <= ' ' || c >= 0x7f {
			return fmt.Errorf("%q holds %s at byte %d; percent-encode it (%%%02X)", p, byteName(c), i, c)
		}
	}
	return nil
}

// checkText returns why s cannot be a label such as a request name: it
// must be UTF-8, without control characters, and at most max bytes long.
func checkText(s string, max int) error {
	if len(s) > max {
		return fmt.Errorf("is %d bytes long, above toll's limit of %d", len(s), max)
	}
	if !utf8.ValidString(s) {
		return errors.New("is not valid UTF-8")
	}
	for _, r := range s {
		if r < ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return fmt.Errorf("%q holds a control character", s)
		}
	}
	return nil
}

// byteName describes a byte that has no place in a request line.
func byteName(c byte) string {
	switch c {
	case ' ':
		return "a space"
	case '\r', '\n':
		return "a line break"
	case 0:
		return "a NUL byte"
	}
	if c >= 0x80 {
		return "a non-ASCII byte"
	}
	return "a control character"
}

// fmtFloat formats a number as a user would write it.
func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
