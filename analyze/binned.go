package analyze

import (
	"math"
	"sort"
)

// Binned is one variant's figures over spans of Every seconds of its
// trials' measured windows: a published benchmark's "CPU every 5 s" table.
type Binned struct {
	Variant string  `json:"variant"`
	Every   float64 `json:"every_s"`
	Bins    []Bin   `json:"bins"`
}

// Bin is one span [From, To) of seconds from MeasureStart. Each figure is
// the median over the variant's trials of the trial's mean over the span's
// seconds, and Low and High the quartiles of the CPU.
type Bin struct {
	From float64 `json:"from_s"`
	To   float64 `json:"to_s"`
	// CPU is the measured services' CPU in cores, CPULow and CPUHigh its
	// quartiles over the trials.
	CPU     float64 `json:"cpu_cores"`
	CPULow  float64 `json:"cpu_cores_low"`
	CPUHigh float64 `json:"cpu_cores_high"`
	// RSS is the measured services' resident set, MiB.
	RSS float64 `json:"rss_mib"`
	// Throughput is in completed requests per second.
	Throughput float64 `json:"throughput_rps"`
	// Trials is how many trials had seconds in the span.
	Trials int `json:"trials"`
}

// binSeconds groups each variant's trials' Seconds into spans of every
// seconds, from 0.
func binSeconds(variants []string, trials []*TrialCosts, every float64) []Binned {
	var out []Binned
	for _, v := range variants {
		type acc struct{ cpu, rss, tput []float64 }
		bins := map[int]*acc{}
		for _, tc := range trials {
			if tc.Variant != v {
				continue
			}
			type sum struct{ cpu, rss, tput, n float64 }
			mine := map[int]*sum{}
			for _, sec := range tc.Seconds {
				k := int(math.Floor(sec.T / every))
				if mine[k] == nil {
					mine[k] = &sum{}
				}
				m := mine[k]
				for _, sv := range sec.Services {
					m.cpu += sv.CPU
					m.rss += sv.RSS
				}
				m.tput += sec.Throughput
				m.n++
			}
			for k, m := range mine {
				if bins[k] == nil {
					bins[k] = &acc{}
				}
				b := bins[k]
				b.cpu = append(b.cpu, m.cpu/m.n)
				b.rss = append(b.rss, m.rss/m.n)
				b.tput = append(b.tput, m.tput/m.n)
			}
		}
		if len(bins) == 0 {
			continue
		}
		var ks []int
		for k := range bins {
			ks = append(ks, k)
		}
		sort.Ints(ks)
		bd := Binned{Variant: v, Every: every}
		for _, k := range ks {
			b := bins[k]
			for _, xs := range [][]float64{b.cpu, b.rss, b.tput} {
				sort.Float64s(xs)
			}
			bd.Bins = append(bd.Bins, Bin{From: float64(k) * every, To: float64(k+1) * every,
				CPU: quantile(b.cpu, 0.5), CPULow: quantile(b.cpu, 0.25), CPUHigh: quantile(b.cpu, 0.75),
				RSS: quantile(b.rss, 0.5), Throughput: quantile(b.tput, 0.5), Trials: len(b.cpu)})
		}
		out = append(out, bd)
	}
	return out
}
