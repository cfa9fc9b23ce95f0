package scenario

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tollperf/toll/pin"
	"github.com/tollperf/toll/supervise"
	"golang.org/x/sys/unix"
)

// testMachine is a fixed machine, so that the errors that name the
// machine's resources read the same everywhere.
var testMachine = machine{online: pin.CPUs{0, 1}, memTotal: 8 << 30, noFile: 20000, ports: 28232, portRange: "32768-60999"}

// list returns a flow list of n copies of item, with %d replaced by the index.
func list(n int, item string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = strings.ReplaceAll(item, "%d", fmt.Sprint(i))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// TestParseRefusesBadValues checks that every absurd number and string is
// refused at parse time, with the file, line and field of the mistake.
func TestParseRefusesBadValues(t *testing.T) {
	const (
		rate     = "  rate: 100\n"
		measure  = "    measure: true\n"
		memory   = "    memory_limit: 256MiB\n"
		request  = "    - {path: /consumer}\n"
		duration = "  duration: 10s\n"
	)
	tests := []struct {
		name, old, new string
		line           int
		field          string
		reason         string
	}{
		// Rates: NaN, infinities, zero, negative, beyond one generator, too low to send anything.
		{"rate 1e12", rate, "  rate: 1e12\n", 20, "load.rate", "1e+12 req/s is above toll's limit of 1000000 req/s: one load generator on one CPU sends at most about 140000 req/s"},
		{"rate NaN", rate, "  rate: .nan\n", 20, "load.rate", ".nan is not a finite number"},
		{"rate +Inf", rate, "  rate: .inf\n", 20, "load.rate", ".inf is not a finite number"},
		{"rate -Inf", rate, "  rate: -.inf\n", 20, "load.rate", "-.inf is not a finite number"},
		{"rate missing", rate, "", 16, "load.rate", "is required: a number of requests per second (open model; 0 measures the services idle)"},
		{"rate negative", rate, "  rate: -5\n", 20, "load.rate", "-5 req/s is not positive"},
		{"rate sends nothing", rate, "  rate: 0.01\n", 20, "load.rate", "0.01 req/s sends no request in a 10s window"},
		{"rates NaN", rate, "  rates: [100, .nan]\n", 20, "load.rates[1]", ".nan is not a finite number"},
		{"rates 1e12", rate, "  rates: [100, 1e12]\n", 20, "load.rates[1]", "above toll's limit of 1000000 req/s"},
		{"too many rates", rate, "  rates: " + list(101, "1%d") + "\n", 20, "load.rates", "101 load steps is above toll's limit of 100"},
		// Users: beyond the local ports, beyond the file descriptors, not whole.
		{"users 1e8", rate, "  users: 100000000\n", 20, "load.users", "100000000 users each hold a connection to the target, more than the 28232 local ports a connection to one address can use (net.ipv4.ip_local_port_range 32768-60999)"},
		{"users beyond RLIMIT_NOFILE", rate, "  users: 15000\n", 20, "load.users", "15000 users need 30256 file descriptors (a connection and a timer each, and 256 for toll's sinks, logs and probes), more than this process may open (RLIMIT_NOFILE 20000)"},
		{"users in a duet count twice", "", "", 0, "", ""}, // built below
		{"users zero in a list", rate, "  users: [10, 0]\n", 20, "load.users[1]", "must be a positive number of users, not 0"},
		{"users not whole", rate, "  users: 2.5\n", 20, "load.users", `"2.5" is not a whole number`},
		// Report: a layout toll has no renderer for.
		{"report.layout unknown", duration, duration + "report:\n  layout: vendor\n", 23, "report.layout", `"vendor" is not a layout (known: sermant, kindling, jetty, skywalking-go, easeagent)`},
		{"max_conns 0", duration, duration + "  max_conns: 0\n", 22, "load.max_conns", "must be at least 1, not 0"},
		{"max_conns beyond ports", duration, duration + "  max_conns: 100000\n", 22, "load.max_conns", "more than the 28232 local ports"},
		{"max_conns beyond RLIMIT_NOFILE", duration, duration + "  max_conns: 25000\n", 22, "load.max_conns", "25000 connections need 25256 file descriptors (a connection each"},
		{"max_conns in the closed model", rate, "  users: 5\n  max_conns: 10\n", 21, "load.max_conns", "applies to the open model only"},
		// Rounds and trials: whole, positive, bounded.
		{"rounds 1e9", duration, duration + "rounds: 1e9\n", 22, "rounds", "write 1e9 as a whole number, without a decimal point or exponent"},
		{"rounds 2.5", duration, duration + "rounds: 2.5\n", 22, "rounds", "2.5 is not a whole number (toll does not round it)"},
		{"rounds 0", duration, duration + "rounds: 0\n", 22, "rounds", "must be at least 1, not 0 (leave rounds out for the default of 10)"},
		{"rounds negative", duration, duration + "rounds: -3\n", 22, "rounds", "must be at least 1, not -3"},
		{"starts 0", duration, duration + "starts: 0\n", 22, "starts", "must be at least 1, not 0 (leave starts out to start the services once)"},
		{"starts beyond rounds", duration, duration + "rounds: 3\nstarts: 4\n", 23, "starts", "4 starts need at least as many rounds, and rounds is 3"},
		{"starts restarted every round", duration, duration + "restart: per-round\nstarts: 2\n", 23, "starts", "restart: per-round already starts them every round"},
		{"rounds 1000000000", duration, duration + "rounds: 1000000000\n", 22, "rounds", "1000000000 is above toll's limit of 10000 rounds"},
		{"trials", rate + duration, "  rates: " + list(30, "1%d") + "\n" + duration + "rounds: 5000\n", 22, "rounds", "5000 rounds × 30 load steps × 2 variants make 300000 trials, above toll's limit of 100000"},
		{"seed not whole", duration, duration + "seed: 2.5\n", 22, "seed", "2.5 is not a whole number"},
		{"seed too big", duration, duration + "seed: 1e30\n", 22, "seed", `"1e30" is not a whole number`},
		// Limits: finite, positive, within the machine.
		{"memory_limit 1e30TiB", memory, "    memory_limit: 1e30TiB\n", 9, "services[1].memory_limit", `"1e30TiB" is more bytes than any machine has`},
		{"memory_limit beyond the machine", memory, "    memory_limit: 64GiB\n", 9, "services[1].memory_limit", "68719476736 bytes is more than this machine's memory (8192 MiB)"},
		{"memory_limit 0", memory, "    memory_limit: 0\n", 9, "services[1].memory_limit", "0 bytes is not a limit (leave memory_limit out for no limit)"},
		{"memory_limit tiny", memory, "    memory_limit: 100KiB\n", 9, "services[1].memory_limit", "102400 bytes is below the least of 1MiB"},
		{"memory_limit fractional bytes", memory, "    memory_limit: 1.5\n", 9, "services[1].memory_limit", `"1.5" is not a whole number of bytes`},
		{"memory_limit NaN", memory, "    memory_limit: NaNMiB\n", 9, "services[1].memory_limit", `"NaNMiB" is not a size`},
		{"memory_limit negative", memory, "    memory_limit: -1GiB\n", 9, "services[1].memory_limit", `"-1GiB" is not a size`},
		// Containers: an image that could be read as an option, an unknown engine, a relative dir, an engine without an image.
		{"image option", measure, measure + "    image: --privileged\n", 9, "services[1].image", `"--privileged" is not an image reference`},
		{"image with a space", measure, measure + "    image: \"app latest\"\n", 9, "services[1].image", "is not an image reference"},
		{"image too long", measure, measure + "    image: " + strings.Repeat("a", 256) + "\n", 9, "services[1].image", "256 bytes long, above the 255"},
		{"image empty", measure, measure + "    image: \"\"\n", 9, "services[1].image", "is empty: name a local image"},
		{"engine unknown", measure, measure + "    image: localhost/app:1\n    engine: lxc\n", 10, "services[1].engine", `"lxc" is not auto, podman or docker`},
		{"engine without image", measure, measure + "    engine: podman\n", 9, "services[1].engine", "engine runs an image"},
		{"stop signal unknown", measure, measure + "    stop_signal: INT\n", 9, "services[1].stop_signal", `"INT" is not one of SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2`},
		{"stop signal the supervisor's own", measure, measure + "    stop_signal: SIGHUP\n", 9, "services[1].stop_signal", `"SIGHUP" is not one of SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2`},
		{"stop signal empty", measure, measure + "    stop_signal: \"\"\n", 9, "services[1].stop_signal", `"" is not one of`},
		{"container dir relative", measure, measure + "    image: localhost/app:1\n    dir: work\n", 10, "services[1].dir", "must be absolute"},
		// Published ports: on a container only, real TCP ports, each once, and no address on the host's loopback inside.
		{"ports without image", measure, measure + "    ports: {http: 8080}\n", 9, "services[1].ports", "ports publishes a container's ports: set image"},
		{"port 0", measure, measure + "    image: localhost/app:1\n    ports: {http: 0}\n", 10, "services[1].ports.http", "0 is not a TCP port (1 to 65535)"},
		{"port 70000", measure, measure + "    image: localhost/app:1\n    ports: {http: 70000}\n", 10, "services[1].ports.http", "70000 is not a TCP port"},
		{"port name", measure, measure + "    image: localhost/app:1\n    ports: {\"a b\": 80}\n", 10, "services[1].ports.a b", `"a b" is not a port name`},
		{"port twice", measure, measure + "    image: localhost/app:1\n    ports: {a: 80, b: 80}\n", 10, "services[1].ports.b", "container port 80 is published as a already"},
		{"too many ports", measure, measure + "    image: localhost/app:1\n    ports: {" + strings.Trim(list(17, "p%d: 8%d"), "[]") + "}\n", 10, "services[1].ports", "17 ports is above toll's limit of 16"},
		{"published container reaches loopback", "    ready: {http:", "    image: localhost/app:1\n    ports: {http: 8080}\n    ready: {http:", 4, "services[0].command[4]", "${port:provider} is an address on the host's loopback, which a container with ports cannot reach"},
		{"published container exports to the sink", "env: {A: b}", "env: {A: \"${sink}\"}", 17, "variants[1].services.consumer.env.A", "${sink} is an address on the host's loopback"},
		{"cpu_limit NaN", measure, measure + "    cpu_limit: .nan\n", 9, "services[1].cpu_limit", ".nan is not a finite number"},
		{"cpu_limit beyond the CPUs", measure, measure + "    cpu_limit: 99\n", 9, "services[1].cpu_limit", "99 cores is more than the 2 CPUs toll may use (0-1)"},
		{"cpu_limit 0", measure, measure + "    cpu_limit: 0\n", 9, "services[1].cpu_limit", "0 is not a positive number of cores (leave cpu_limit out for no limit)"},
		{"cpu_limit below the kernel's quota", measure, measure + "    cpu_limit: 0.001\n", 9, "services[1].cpu_limit", "0.001 cores is below the least of 0.01"},
		// CPU lists: against the online CPUs, without expanding absurd ranges.
		{"cpus offline", measure, measure + "    cpus: \"99\"\n", 9, "services[1].cpus", "CPU 99 is not one toll may use: this machine's online CPUs (toll's affinity) are 0-1"},
		{"cpus huge range", measure, measure + "    cpus: 0-4000000000\n", 9, "services[1].cpus", "CPU 4000000000 is not one toll may use"},
		{"cpus backwards", measure, measure + "    cpus: 1-0\n", 9, "services[1].cpus", "bad range"},
		{"cpus empty", measure, measure + "    cpus: \"\"\n", 9, "services[1].cpus", `"" is not a CPU list`},
		{"pinning.load offline", "name: demo\n", "name: demo\npinning: {load: \"5\"}\n", 2, "pinning.load", "CPU 5 is not one toll may use"},
		{"pinning.services offline", "name: demo\n", "name: demo\npinning:\n  services: 0,7\n", 3, "pinning.services", "CPU 7 is not one toll may use"},
		{"pinning.warmup unknown", duration, duration + "  variant_warmup: 1m\npinning: {warmup: load}\n", 23, "pinning.warmup", `"load" is not all`},
		{"pinning.warmup without a warm-up", duration, duration + "pinning: {warmup: all}\nrounds: 10\n", 22, "pinning.warmup", "set load.variant_warmup"},
		{"pinning.warmup unpinned", duration, duration + "  variant_warmup: 1m\npinning: {off: true, warmup: all}\n", 23, "pinning.warmup", "pinning.off leaves them unpinned"},
		{"pinning.warmup with a container", measure, measure + "    image: localhost/app:1\n", 24, "pinning.warmup", "service consumer runs in a container"},
		// Durations: bounded, and an explicit 0 is not a default.
		{"duration 48h", duration, "  duration: 48h\n", 21, "load.duration", "48h0m0s is above toll's limit of 24h0m0s"},
		{"duration negative", duration, "  duration: -5s\n", 21, "load.duration", `"-5s" is negative`},
		{"duration overflows", duration, "  duration: 9999999999h\n", 21, "load.duration", "is not a duration"},
		{"warmup 25h", duration, duration + "  warmup: 25h\n", 22, "load.warmup", "above toll's limit of 24h0m0s"},
		{"timeout 5m", duration, duration + "  timeout: 5m\n", 22, "load.timeout", "5m0s is above toll's limit of 1m0s: latencies are recorded up to 60s"},
		{"timeout 0", duration, duration + "  timeout: 0\n", 22, "load.timeout", "0s is below the least of 1ms"},
		{"quantum 2s", duration, duration + "  quantum: 2s\n", 22, "load.quantum", "above toll's limit of 1s"},
		// Slices: turns of a shared duet's open-model load, fitting a second.
		{"slice without a duet", duration, duration + "  slice: 250ms\n", 22, "load.slice", "set mode: duet and pinning: {duet: shared}"},
		{"shared duet: slice 300ms", duration, duration + "  slice: 300ms\n", 22, "load.slice", "300ms does not divide a second into whole turns of both sides"},
		{"shared duet: slice 1ms", duration, duration + "  slice: 1ms\n", 22, "load.slice", "1ms is below the least of 10ms"},
		{"shared duet: slice 1s", duration, duration + "  slice: 1s\n", 22, "load.slice", "above toll's limit of 500ms"},
		{"shared duet: slice with users", rate, "  users: 5\n  slice: 250ms\n", 21, "load.slice", "applies to the open model only"},
		// Arrivals: one of two processes, open model only.
		{"arrival unknown", duration, duration + "  arrival: bursty\n", 22, "load.arrival", `"bursty" is not one of uniform (requests 1/rate apart) or poisson`},
		{"arrival empty", duration, duration + "  arrival: \"\"\n", 22, "load.arrival", `"" is not one of uniform`},
		{"arrival in the closed model", rate, "  users: 5\n  arrival: poisson\n", 21, "load.arrival", "applies to the open model only (rate or rates)"},
		{"think 2h", rate, "  users: 5\n  think: 2h\n", 21, "load.think", "above toll's limit of 1h0m0s"},
		{"ramp 25h", rate, "  users: 5\n  ramp: 25h\n", 21, "load.ramp", "above toll's limit of 24h0m0s"},
		{"sample 0", duration, duration + "sample: 0\n", 22, "sample", "0s is below the least of 100ms"},
		{"sample 2h", duration, duration + "sample: 2h\n", 22, "sample", "above toll's limit of 1h0m0s"},
		{"ready timeout 0", "    ready: {http: \"http://127.0.0.1:${port:provider}/health\"}\n", "    ready: {http: \"http://127.0.0.1:${port:provider}/health\", timeout: 0}\n", 5, "services[0].ready.timeout", "0s is below the least of 1ms"},
		{"slo_p99 2m", duration, duration + "find_max: {slo_p99: 2m}\n", 22, "find_max.slo_p99", "latencies are recorded up to 60s"},
		{"trim 25h", duration, duration + "trim: {start: 25h}\n", 22, "trim.start", "above toll's limit of 24h0m0s"},
		{"variant_warmup 25h", duration, duration + "  variant_warmup: 25h\n", 22, "load.variant_warmup", "above toll's limit of 24h0m0s"},
		{"variant_warmup with idle steps only", rate + duration, "  rate: 0\n" + duration + "  variant_warmup: 1m\n", 22, "load.variant_warmup", "every step of this scenario is idle"},
		{"variant_warmup_rate without a warm-up", duration, duration + "  variant_warmup_rate: 500\n", 22, "load.variant_warmup_rate", "set load.variant_warmup to how long the warm-up lasts"},
		{"variant_warmup_rate 0", duration, duration + "  variant_warmup: 1m\n  variant_warmup_rate: 0\n", 23, "load.variant_warmup_rate", "0 req/s is not positive"},
		{"variant_warmup_rate beyond the generator", duration, duration + "  variant_warmup: 1m\n  variant_warmup_rate: 1e9\n", 23, "load.variant_warmup_rate", "above toll's limit"},
		{"variant_warmup_rate with users", rate, "  users: 5\n  variant_warmup: 1m\n  variant_warmup_rate: 500\n", 22, "load.variant_warmup_rate", "is an open-model rate, and this load is closed-model users"},
		{"variant_warmup_users and _rate without until", duration, duration + "  variant_warmup: 1m\n  variant_warmup_rate: 500\n  variant_warmup_users: 2\n", 24, "load.variant_warmup_users", "there is no load.variant_warmup_until to say when"},
		{"variant_warmup_users and _rate 0", duration, duration + "  variant_warmup: 1m\n  variant_warmup_until: {jit_below: 5ms, over: 10s}\n  variant_warmup_users: 2\n  variant_warmup_rate: 0\n", 25, "load.variant_warmup_rate", "0 req/s is not positive"},
		{"variant_warmup_users 0 and _rate", duration, duration + "  variant_warmup: 1m\n  variant_warmup_until: {jit_below: 5ms, over: 10s}\n  variant_warmup_users: 0\n  variant_warmup_rate: 500\n", 24, "load.variant_warmup_users", "must be a positive number of users, not 0"},
		{"variant_warmup_users 0", duration, duration + "  variant_warmup: 1m\n  variant_warmup_users: 0\n", 23, "load.variant_warmup_users", "must be a positive number of users, not 0"},
		{"variant_warmup_users without a warm-up", duration, duration + "  variant_warmup_users: 2\n", 22, "load.variant_warmup_users", "set load.variant_warmup"},
		{"variant_warmup_users beyond the ports", duration, duration + "  variant_warmup: 1m\n  variant_warmup_users: 100000000\n", 23, "load.variant_warmup_users", "local ports"},
		{"variant_warmup negative", duration, duration + "  variant_warmup: -1s\n", 22, "load.variant_warmup", `"-1s" is negative`},
		{"variant_warmup_until without a maximum", duration, duration + "  variant_warmup_until: {jit_below: 5ms, over: 10s}\n", 22, "load.variant_warmup_until", "set load.variant_warmup to the most the warm-up may last"},
		{"variant_warmup_until without jit_below", duration, duration + "  variant_warmup: 1m\n  variant_warmup_until: {over: 10s}\n", 23, "load.variant_warmup_until", "needs jit_below"},
		{"variant_warmup_until without over", duration, duration + "  variant_warmup: 1m\n  variant_warmup_until: {jit_below: 5ms}\n", 23, "load.variant_warmup_until", "needs over"},
		{"variant_warmup_until jit_below 2s", duration, duration + "  variant_warmup: 1m\n  variant_warmup_until: {jit_below: 2s, over: 10s}\n", 23, "load.variant_warmup_until.jit_below", "a whole core compiling"},
		{"variant_warmup_until jit_below 0", duration, duration + "  variant_warmup: 1m\n  variant_warmup_until: {jit_below: 0s, over: 10s}\n", 23, "load.variant_warmup_until.jit_below", "below the least of 1µs"},
		{"variant_warmup_until over 1s", duration, duration + "  variant_warmup: 1m\n  variant_warmup_until: {jit_below: 5ms, over: 1s}\n", 23, "load.variant_warmup_until.over", "below the least of 2s"},
		{"variant_warmup_until over the maximum", duration, duration + "  variant_warmup: 1m\n  variant_warmup_until: {jit_below: 5ms, over: 1m}\n", 23, "load.variant_warmup_until.over", "could never settle before its maximum"},
		// Per-variant limits, as a service's.
		{"variant cpu_limit beyond the CPUs", "    exports: true\n", "    exports: true\n    cpu_limit: 99\n", 14, "variants[1].cpu_limit", "99 cores is more than the 2 CPUs toll may use (0-1)"},
		{"variant cpu_limit 0", "    exports: true\n", "    exports: true\n    cpu_limit: 0\n", 14, "variants[1].cpu_limit", "0 is not a positive number of cores"},
		{"variant memory_limit tiny", "    exports: true\n", "    exports: true\n    memory_limit: 100KiB\n", 14, "variants[1].memory_limit", "102400 bytes is below the least of 1MiB"},
		{"variant memory_limit beyond the machine", "    exports: true\n", "    exports: true\n    memory_limit: 64GiB\n", 14, "variants[1].memory_limit", "more than this machine's memory (8192 MiB)"},
		{"override cpu_limit tiny", "env: {A: b}}", "env: {A: b}, cpu_limit: 0.001}", 15, "variants[1].services.consumer.cpu_limit", "0.001 cores is below the least of 0.01"},
		{"override memory_limit 0", "env: {A: b}}", "env: {A: b}, memory_limit: 0}", 15, "variants[1].services.consumer.memory_limit", "0 bytes is not a limit"},
		// A load test's matrix.
		{"matrix cpus twice", duration, duration + "matrix: {cpus: [1, 1]}\n", 22, "matrix.cpus[1]", "1 cores is listed twice"},
		{"matrix cpus beyond the CPUs", duration, duration + "matrix:\n  cpus: [1, 3]\n", 23, "matrix.cpus[1]", "3 cores is more than the 2 CPUs toll may use"},
		{"matrix cpus tiny", duration, duration + "matrix: {cpus: [0]}\n", 22, "matrix.cpus[0]", "0 cores is below the least of 0.01"},
		{"matrix cpus empty", duration, duration + "matrix: {cpus: []}\n", 22, "matrix.cpus", "is empty"},
		{"matrix cpus NaN", duration, duration + "matrix: {cpus: [.nan]}\n", 22, "matrix.cpus[0]", ".nan is not a finite number"},
		{"matrix trials", rate + duration, "  rates: " + list(30, "1%d") + "\n" + duration + "rounds: 1000\nmatrix: {cpus: [1, 1.5, 2]}\n", 22, "rounds", "1000 rounds × 90 load steps × 2 variants make 180000 trials"},
		{"matrix unknown field", duration, duration + "matrix: {memory: [1GiB]}\n", 22, "matrix.memory", ""},
		// find_max.
		{"find_max.start 1e12", duration, duration + "find_max: {start: 1e12}\n", 22, "find_max.start", "above toll's limit of 1000000 req/s"},
		{"find_max.start 0", duration, duration + "find_max: {start: 0}\n", 22, "find_max.start", "0 req/s is not positive"},
		{"find_max.precision NaN", duration, duration + "find_max: {precision: .nan}\n", 22, "find_max.precision", ".nan is not a finite number"},
		{"find_max.max_trials 0", duration, duration + "find_max:\n  max_trials: 0\n", 23, "find_max.max_trials", "must be between 2 and 100"},
		// Requests: paths, methods, headers, names, bodies, weights.
		{"path with a space", request, "    - {path: /a b}\n", 19, "load.requests[0].path", `"/a b" holds a space at byte 2; percent-encode it (%20)`},
		{"path with CR/LF", request, "    - {path: \"/a\\r\\nHost: evil\"}\n", 19, "load.requests[0].path", "holds a line break at byte 2"},
		{"path with NUL", request, "    - {path: \"/a\\0\"}\n", 19, "load.requests[0].path", "holds a NUL byte at byte 2"},
		{"path not ASCII", request, "    - {path: /é}\n", 19, "load.requests[0].path", "holds a non-ASCII byte at byte 1"},
		{"path relative", request, "    - {path: a}\n", 19, "load.requests[0].path", `"a" must start with /`},
		{"method with a space", request, "    - {path: /, method: \"GET /x\"}\n", 19, "load.requests[0].method", `"GET /X" is not an HTTP method`},
		{"header value with CR/LF", request, "    - {path: /, headers: {X-A: \"a\\r\\nX-Evil: 1\"}}\n", 19, "load.requests[0].headers.X-A", "the value of X-A holds a line break or another control character"},
		{"header value with NUL", request, "    - {path: /, headers: {X-A: \"a\\0\"}}\n", 19, "load.requests[0].headers.X-A", "holds a line break or another control character"},
		{"header name with a space", request, "    - {path: /, headers: {\"X A\": b}}\n", 19, "load.requests[0].headers.X A", `"X A" is not a header name`},
		{"header name empty", request, "    - {path: /, headers: {\"\": b}}\n", 19, "load.requests[0].headers.", `"" is not a header name`},
		{"header set by toll", request, "    - {path: /, headers: {content-length: \"5\"}}\n", 19, "load.requests[0].headers.content-length", "content-length is set by toll's load generator"},
		{"header twice", request, "    - {path: /, headers: {X-A: a, x-a: b}}\n", 19, "load.requests[0].headers.x-a", "is the same header as X-A"},
		{"request name with a line break", request, "    - {path: /, name: \"a\\nb\"}\n", 19, "load.requests[0].name", "holds a control character"},
		{"request name too long", request, "    - {path: /, name: " + strings.Repeat("n", 201) + "}\n", 19, "load.requests[0].name", "is 201 bytes long, above toll's limit of 200"},
		{"body too big", request, "    - {path: /, body: " + strings.Repeat("b", 65537) + "}\n", 19, "load.requests[0].body", "65537 bytes is above toll's limit of 64 KiB"},
		{"weight not whole", request, "    - {path: /, weight: 2.5}\n", 19, "load.requests[0].weight", "2.5 is not a whole number"},
		{"weight 0", request, "    - {path: /, weight: 0}\n", 19, "load.requests[0].weight", "must be at least 1, not 0"},
		{"weight huge", request, "    - {path: /, weight: 1000000000}\n", 19, "load.requests[0].weight", "above toll's limit of 10000"},
		{"too many requests", "", "", 0, "", ""}, // built below
		{"target with a query", "  target: \"http://127.0.0.1:${port:consumer}\"\n", "  target: \"http://127.0.0.1:${port:consumer}/?a=1\"\n", 17, "load.target", "has a query or fragment"},
		{"target with CR/LF", "  target: \"http://127.0.0.1:${port:consumer}\"\n", "  target: \"http://127.0.0.1:${port:consumer}\\r\\n\"\n", 17, "load.target", "is not an http:// or https:// URL"},
		// Processes: names, arguments, environment.
		{"service name too long", "  - name: consumer\n", "  - name: " + strings.Repeat("c", 65) + "\n", 6, "services[1].name", "is 65 bytes long, above toll's limit of 64"},
		{"argument with NUL", "    command: [toll, app, consumer]\n", "    command: [toll, app, \"con\\0sumer\"]\n", 7, "services[1].command[2]", "holds a NUL byte"},
		{"env name with =", "env: {A: b}", "env: {\"A=B\": b}", 15, "variants[1].services.consumer.env.A=B", `"A=B" is not an environment variable name`},
		{"ready.tcp with CR/LF", "    ready: {http: \"http://127.0.0.1:${port:provider}/health\"}\n", "    ready: {tcp: \"127.0.0.1:1\\r\\n\"}\n", 5, "services[0].ready.tcp", "is not host:port"},
		{"ready: log and http", "    ready: {http: \"http://127.0.0.1:${port:provider}/health\"}\n", "    ready: {http: \"http://127.0.0.1:${port:provider}/health\", log: attached}\n", 5, "services[0].ready", "set one of http, tcp, log or command, not 2"},
		{"ready: command and http", "    ready: {http: \"http://127.0.0.1:${port:provider}/health\"}\n", "    ready: {http: \"http://127.0.0.1:${port:provider}/health\", command: [\"true\"]}\n", 5, "services[0].ready", "set one of http, tcp, log or command, not 2"},
		{"ready.command empty", "    ready: {http: \"http://127.0.0.1:${port:provider}/health\"}\n", "    ready: {command: []}\n", 5, "services[0].ready.command", "is empty; give a command"},
		{"ready.command bad placeholder", "    ready: {http: \"http://127.0.0.1:${port:provider}/health\"}\n", "    ready: {command: [check, \"${prot:x}\"]}\n", 5, "services[0].ready.command[1]", "unknown placeholder ${prot:x}"},
		{"nmt in a container", measure, measure + "    image: localhost/app:1\n    nmt: true\n", 10, "services[1].nmt", "cannot attach to a JVM in a container"},
		{"scrape without url", measure, measure + "    scrape: {metrics: [up]}\n", 9, "services[1].scrape.url", "is required"},
		{"scrape url not http", measure, measure + "    scrape: {url: \"127.0.0.1:9/metrics\", metrics: [up]}\n", 9, "services[1].scrape.url", "is not an http:// or https:// URL"},
		{"scrape without metrics", measure, measure + "    scrape: {url: \"http://127.0.0.1:${port:m}/metrics\"}\n", 9, "services[1].scrape.metrics", "name at least one metric"},
		{"scrape metric name", measure, measure + "    scrape: {url: \"http://127.0.0.1:${port:m}/metrics\", metrics: [a-b]}\n", 9, "services[1].scrape.metrics[0]", `"a-b" is not a Prometheus metric name`},
		{"scrape metric twice", measure, measure + "    scrape: {url: \"http://127.0.0.1:${port:m}/metrics\", metrics: [up, up]}\n", 9, "services[1].scrape.metrics[1]", `"up" is listed twice`},
		{"scrape timeout 1m", measure, measure + "    scrape: {url: \"http://127.0.0.1:${port:m}/metrics\", metrics: [up], timeout: 1m}\n", 9, "services[1].scrape.timeout", "above toll's limit of 30s"},
		{"ready.log not a regexp", "    ready: {http: \"http://127.0.0.1:${port:provider}/health\"}\n", "    ready: {log: \"(attached\"}\n", 5, "services[0].ready.log", `"(attached" is not a regular expression`},
		{"ready.log too long", "    ready: {http: \"http://127.0.0.1:${port:provider}/health\"}\n", "    ready: {log: " + strings.Repeat("a", 1025) + "}\n", 5, "services[0].ready.log", "is 1025 bytes long; at most 1024"},
		{"variant load.target not a URL", "    exports: true\n", "    exports: true\n    load: {target: \"127.0.0.1:${port:proxy}\"}\n", 14, "variants[1].load.target", "is not an http:// or https:// URL"},
		{"variant load.target with a query", "    exports: true\n", "    exports: true\n    load: {target: \"http://127.0.0.1:${port:proxy}/?a\"}\n", 14, "variants[1].load.target", "has a query or fragment"},
		{"variant load.target empty", "    exports: true\n", "    exports: true\n    load: {target: \"\"}\n", 14, "variants[1].load.target", "is empty; leave it out"},
		{"variant load.target bad placeholder", "    exports: true\n", "    exports: true\n    load: {target: \"http://127.0.0.1:${prot:proxy}\"}\n", 14, "variants[1].load.target", "${prot:proxy}"},
		// Placeholders: an unterminated one is refused like an unknown one.
		{"command unterminated placeholder", `"127.0.0.1:${port:provider}"]`, `"127.0.0.1:${port:provider"]`, 4, "services[0].command[4]", `unterminated placeholder "${port:provider"`},
		{"env unterminated placeholder", "env: {A: b}", "env: {A: \"${sink\"}", 15, "variants[1].services.consumer.env.A", `unterminated placeholder "${sink"`},
		{"request unterminated placeholder", request, "    - {path: \"/c/${id\"}\n", 19, "load.requests[0].path", `unterminated placeholder "${id"`},
		{"too many variants", "", "", 0, "", ""}, // built below
	}
	// Cases whose text is built rather than written out.
	for i := range tests {
		switch tests[i].name {
		case "users in a duet count twice":
			tests[i].old, tests[i].new = rate, "  users: 10000\n"
			tests[i].line, tests[i].field, tests[i].reason = 20, "load.users", "10000 users (×2: the variants run at once have 2 load generators) need 40256 file descriptors"
		case "too many requests":
			tests[i].old = "  requests:\n" + request
			tests[i].new = "  requests: " + list(101, "{path: /%d}") + "\n"
			tests[i].line, tests[i].field, tests[i].reason = 18, "load.requests", "101 requests is above toll's limit of 100"
		case "too many variants":
			tests[i].old = "  - name: otel\n"
			var b strings.Builder
			for j := range 63 {
				fmt.Fprintf(&b, "  - {name: v%d}\n", j)
			}
			tests[i].new = b.String() + "  - name: otel\n"
			tests[i].line, tests[i].field, tests[i].reason = 10, "variants", "65 variants is above toll's limit of 64"
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := strings.Replace(good, tt.old, tt.new, 1)
			if tt.name == "published container exports to the sink" {
				src = strings.Replace(src, measure, measure+"    image: localhost/app:1\n    ports: {http: 8080}\n", 1)
			}
			if tt.name == "pinning.warmup with a container" {
				src = strings.Replace(src, duration, duration+"  variant_warmup: 1m\npinning: {warmup: all}\n", 1)
			}
			if strings.HasPrefix(tt.name, "shared duet: ") {
				src = strings.Replace(src, "name: demo\n", "name: demo\nmode: duet\npinning: {duet: shared}\n", 1)
				tt.line += 2
			}
			if tt.name == "users in a duet count twice" {
				src = strings.Replace(src, "name: demo\n", "name: demo\nmode: duet\npinning: {duet: shared}\n", 1)
				tt.line += 2
			}
			if src == good {
				t.Fatalf("test did not change the scenario")
			}
			_, err := parse("demo.yaml", []byte(src), testMachine)
			if err == nil {
				t.Fatalf("accepted:\n%s", src)
			}
			prefix := fmt.Sprintf("demo.yaml:%d: %s: ", tt.line, tt.field)
			if msg := err.Error(); !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, tt.reason) {
				t.Errorf("error\n  %s\nwant it to start with\n  %s\nand contain\n  %s", msg, prefix, tt.reason)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

// TestParseRefusesSecondDocument checks that a file holding a second YAML
// document, after a --- or after a ... that ended the first, is refused at
// the line where it starts: the decoder reads only the first, and the rest
// would be ignored without a word.
func TestParseRefusesSecondDocument(t *testing.T) {
	tests := []struct {
		name, src string
		line      int
	}{
		{"second scenario", good + "---\n" + good, 22},
		{"leading marker, then a second", "---\n" + good + "---\nname: other\n", 23},
		{"empty second document", good + "---\n", 22},
		{"after an end marker", good + "...\n---\nrounds: 3\n", 23},
		{"after an end marker, no ---", good + "...\nrounds: 3\n", 23},
		{"after an end marker and a comment", good + "...\n# more\n\nname: other\n", 25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse("demo.yaml", []byte(tt.src), testMachine)
			if err == nil {
				t.Fatalf("accepted:\n%s", tt.src)
			}
			want := fmt.Sprintf("demo.yaml:%d: a second YAML document", tt.line)
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error\n  %s\nwant it to start with\n  %s", err, want)
			}
		})
	}
	for _, src := range []string{"---\n" + good, good + "...\n", good + "...\n# the end\n\n"} {
		if _, err := parse("demo.yaml", []byte(src), testMachine); err != nil {
			t.Errorf("one document: %v\n%s", err, src)
		}
	}
}

// TestParseKeepsExplicitValues checks the other side: values that look like
// the defaults' zero are kept when written, defaults fill only what is left
// out, and what an alias or merge key sets counts as set.
func TestParseKeepsExplicitValues(t *testing.T) {
	src := strings.Replace(good, "  duration: 10s\n", "  duration: 10s\n  warmup: 0\n  <<: {timeout: 3s}\nrounds: 3\n", 1)
	src = strings.Replace(src, "    - {path: /consumer}\n", "    - {path: /consumer, weight: 3, headers: {X-Id: \"${id}\", Host: example}}\n", 1)
	s, err := parse("demo.yaml", []byte(src), testMachine)
	if err != nil {
		t.Fatal(err)
	}
	if s.Load.Warmup != 0 || s.Load.Timeout.D() != 3*time.Second || s.Rounds != 3 || s.Load.Requests[0].Weight != 3 {
		t.Errorf("warmup %s timeout %s rounds %d weight %d, want 0s 3s 3 3", s.Load.Warmup, s.Load.Timeout, s.Rounds, s.Load.Requests[0].Weight)
	}
}

// TestReadRefusesLargeFiles checks the size cap is applied before a large
// file, or an endless one, is read.
func TestReadRefusesLargeFiles(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 15<<20); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ path, want string }{
		{big, big + ": the file is 15728640 bytes, above toll's limit of 1 MiB for a scenario"},
		{"/dev/zero", "/dev/zero: a device, not a regular file"},
	} {
		if _, err := Read(tt.path); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("Read(%s) = %v, want %s…", tt.path, err, tt.want)
		}
	}
	data := append([]byte("name: demo\n"), make([]byte, MaxFileSize)...)
	if _, err := Parse("demo.yaml", data); err == nil || !strings.Contains(err.Error(), "above toll's limit of 1 MiB") {
		t.Errorf("Parse of %d bytes: %v", len(data), err)
	}
}

// TestReadRefusesWhatIsNotARegularFile reads a FIFO no one writes, a
// directory, a device and a symbolic link to a FIFO: each is refused at
// once, naming the file and what it is, where a FIFO used to block the
// read (and toll with it, deaf to signals) until a writer came.
func TestReadRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "f.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ path, want string }{
		{fifo, fifo + ": a FIFO (named pipe), not a regular file"},
		{link, link + ": a FIFO (named pipe), not a regular file"},
		{dir, dir + ": a directory, not a regular file"},
		{"/dev/null", "/dev/null: a device, not a regular file"},
	} {
		done := make(chan error, 1)
		go func() {
			_, err := Read(tt.path)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("Read(%s) = %v, want %s…", tt.path, err, tt.want)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("Read(%s) still blocked after 5s", tt.path)
		}
	}
}

// TestCPUListsAgainstThisMachine checks CPU lists against the real online
// CPUs: the first is accepted, one past the last refused.
func TestCPUListsAgainstThisMachine(t *testing.T) {
	online, err := pin.Online()
	if err != nil {
		t.Skip(err)
	}
	ok := strings.Replace(good, "    measure: true\n", fmt.Sprintf("    measure: true\n    cpus: \"%d\"\n", online[0]), 1)
	if _, err := Parse("demo.yaml", []byte(ok)); err != nil {
		t.Errorf("CPU %d: %v", online[0], err)
	}
	bad := strings.Replace(good, "    measure: true\n", fmt.Sprintf("    measure: true\n    cpus: \"%d\"\n", online[len(online)-1]+1), 1)
	if _, err := Parse("demo.yaml", []byte(bad)); err == nil || !strings.Contains(err.Error(), "demo.yaml:9: services[1].cpus: CPU") {
		t.Errorf("CPU %d: %v", online[len(online)-1]+1, err)
	}
}

// TestParseRefusesAliasBombs checks that a few lines of aliases standing
// for 10⁹ nodes are refused, not expanded, whichever way the decoder meets
// them.
func TestParseRefusesAliasBombs(t *testing.T) {
	var b strings.Builder
	b.WriteString("l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		fmt.Fprintf(&b, "l%d: &l%d [*l%[3]d, *l%[3]d, *l%[3]d, *l%[3]d, *l%[3]d, *l%[3]d, *l%[3]d, *l%[3]d, *l%[3]d, *l%[3]d]\n", i, i, i-1)
	}
	bomb := b.String()
	for name, src := range map[string]string{
		"unknown fields": bomb,
		"a string field": "description:\n  " + strings.ReplaceAll(bomb, "\n", "\n  ") + "\n",
		"a list field":   good + "rounds: 1\nseed: 1\ntrim: {start: 1s}\n" + strings.Replace(bomb, "l8:", "variants_x:", 1),
	} {
		begin := time.Now()
		_, err := parse("bomb.yaml", []byte(src), testMachine)
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
		if d := time.Since(begin); d > 5*time.Second {
			t.Errorf("%s: took %s", name, d)
		}
	}
}

// TestControlNeedsItsName checks that control: true, which adds a variant
// named "control", is refused where a variant has that name already, at
// the control field's line.
func TestControlNeedsItsName(t *testing.T) {
	src := strings.Replace(good, "name: demo\n", "name: demo\ncontrol: true\n", 1)
	if _, err := parse("demo.yaml", []byte(src), testMachine); err != nil {
		t.Fatalf("control: true refused: %v", err)
	}
	src = strings.Replace(src, "  - name: otel\n", "  - name: control\n  - name: otel\n", 1)
	_, err := parse("demo.yaml", []byte(src), testMachine)
	if err == nil || !strings.HasPrefix(err.Error(), "demo.yaml:2: control: ") || !strings.Contains(err.Error(), `"control"`) {
		t.Errorf("error %v, want demo.yaml:2: control: … \"control\" …", err)
	}
}

// TestStopSignalsPassedOn holds the signals a stop_signal may name to
// those toll's supervisor passes on to a service (supervise.PassedOn): a
// signal it keeps for itself would reach the service only through the
// group, and tell the supervisor that toll may have died.
func TestStopSignalsPassedOn(t *testing.T) {
	want := map[string]syscall.Signal{}
	for _, sig := range supervise.PassedOn() {
		want[unix.SignalName(sig)] = sig
	}
	if got := stopSignals(); !maps.Equal(got, want) {
		t.Errorf("stop_signal names %v, the supervisor passes on %v", got, want)
	}
}
