package record

// Calibration holds the figures toll's intervals take from measurements
// made before a run rather than from the run itself: effects that stay the
// same in every round of a run, which no number of rounds can show. Each
// figure carries its provenance: what measured it, where and when, and the
// entry of docs/journal.md that holds the runs. A run records the
// calibration it was analysed with in its manifest, so that a report
// rendered later from the same directory uses the same figures.
type Calibration struct {
	// RunNoisePct is the standard deviation, in percent, of an effect on a
	// variant's level that stays the same in every round of one run and
	// differs between runs (its ports, its cgroups, its place in the
	// list). Every ratio's interval carries it for both sides.
	RunNoisePct float64 `json:"run_noise_pct"`
	// RunNoiseSource says how RunNoisePct was measured.
	RunNoiseSource string `json:"run_noise_source"`
	// JVMStartNoisePct is, per cost (by its summary.json name), the
	// standard deviation in percent of what differs in a JVM's cost
	// between two starts of the same program: what its JIT compiled. A run
	// that started its JVMs once carries it in that cost's interval,
	// divided among its starts; a cost without an entry carries none.
	JVMStartNoisePct map[string]float64 `json:"jvm_start_noise_pct"`
	// JVMStartNoiseSource says how JVMStartNoisePct was measured.
	JVMStartNoiseSource string `json:"jvm_start_noise_source"`
}

// DefaultCalibration returns the calibration toll applies to a run: the
// figures measured on the project's own machine with bench/aa.sh and
// examples/java/aa-together.yaml. bench/aa.sh and that scenario measure
// them on another machine.
func DefaultCalibration() Calibration {
	return Calibration{
		RunNoisePct: 0.25,
		RunNoiseSource: "bench/aa.sh, 20 A/A runs of two service shapes (shared duet, restart per-round, 10 rounds): " +
			"the estimates spread 1.25 times what their intervals claimed, 0.16-0.26% per variant; " +
			"2-vCPU VM, 2026-11-24, toll f77145f; docs/journal.md#twenty-aa-runs-a-run-level-effect",
		JVMStartNoisePct: map[string]float64{"cpu_per_request_ms": 2.0, "cpu_cores": 2.0, "cpu_per_request_nojit_ms": 1.0},
		JVMStartNoiseSource: "examples/java/aa-together.yaml, six runs of a Spring Boot baseline and four identical twins started once (20 rounds): " +
			"the least values, in half points, that left at most one false positive in the 24 twins; " +
			"2-vCPU VM, 2026-11-26, toll f5406c9; docs/journal.md#two-starts-of-one-jvm",
	}
}
