package analyze

import (
	"strings"
	"testing"
)

// curveSummary is a run at rates with the agent adding cores(rate) ± half
// CPU, and p99(rate) ms of latency ± 0.1.
func curveSummary(rates []float64, cores func(float64) float64, half float64, p99 func(float64) float64) *Summary {
	s := &Summary{Baseline: "baseline", Variants: []string{"baseline", "agent"}}
	for i, r := range rates {
		lo, hi := cores(r)-half, cores(r)+half
		plo, phi := p99(r)-0.1, p99(r)+0.1
		s.Steps = append(s.Steps, Step{Index: i, Rate: r, Idle: r == 0, Variants: []VariantResult{
			{Name: "baseline"},
			{Name: "agent", Costs: []CostResult{
				{Cost: CPUCores, Delta: &Delta{Abs: cores(r), AbsCILow: &lo, AbsCIHigh: &hi}},
				{Cost: LatencyP99, Delta: &Delta{Abs: p99(r), AbsCILow: &plo, AbsCIHigh: &phi}},
			}},
		}})
	}
	return s
}

// TestCostCurveAndBill checks a curve through steps whose added CPU is
// 0.011 cores plus 0.29 ms a request: both parts found, Istio's form per
// 1,000 req/s, the bill of 40 instances at 300 req/s, the latency read
// between steps, and a rate beyond the steps refused.
func TestCostCurveAndBill(t *testing.T) {
	cores := func(r float64) float64 { return 0.011 + 0.29e-3*r }
	p99 := func(r float64) float64 { return 0.2 + r/1000 }
	s := curveSummary([]float64{0, 100, 500, 900}, cores, 0.002, p99)
	curves := CostCurves(s)
	if len(curves) != 2 {
		t.Fatalf("%d curves, want CPU and p99", len(curves))
	}
	cpu := curves[0]
	if cpu.Cost != CPUCores || !cpu.Fits || cpu.Fixed.Low > 0.011 || cpu.Fixed.High < 0.011 || cpu.PerRequest.Low > 0.29e-3 || cpu.PerRequest.High < 0.29e-3 {
		t.Fatalf("CPU curve %+v fixed %+v per request %+v", cpu, cpu.Fixed, cpu.PerRequest)
	}
	if k := cpu.PerThousand; k.Low > 0.29 || k.High < 0.29 {
		t.Errorf("per 1,000 req/s: %+v, want 0.29 cores", k)
	}
	forty := make([]float64, 40)
	for i := range forty {
		forty[i] = 300
	}
	bill, err := Bill(curves, FleetLoad{Rates: forty})
	if err != nil {
		t.Fatal(err)
	}
	if b := bill[0].Added; bill[0].Refused != "" || b.Low > 40*cores(300) || b.High < 40*cores(300) {
		t.Errorf("40 instances at 300 req/s: %+v (%s), want %.3f cores", b, bill[0].Refused, 40*cores(300))
	}
	if b := bill[1].Added; bill[1].Refused != "" || abs(b.Value-p99(300)) > 1e-9 {
		t.Errorf("p99 at 300 req/s: %+v (%s), want %.3f ms read between the steps", b, bill[1].Refused, p99(300))
	}
	prices := Prices(bill, 0.04, 0)
	if len(prices) != 1 || abs(prices[0].PerHour.Value-bill[0].Added.Value*0.04) > 1e-12 || abs(prices[0].PerMonth.Value-prices[0].PerHour.Value*720) > 1e-9 {
		t.Errorf("prices %+v", prices)
	}
	bill, _ = Bill(curves, FleetLoad{Rates: []float64{1200}})
	for _, b := range bill {
		if !strings.Contains(b.Refused, "outside the rates measured") {
			t.Errorf("%s at 1200 req/s: %+v, want refused", b.Cost, b)
		}
	}
}

// TestCostCurveThatJumps checks that steps which do not lie on a line (a
// cost that jumps at one rate) are said not to fit, and that no bill is
// made from the line.
func TestCostCurveThatJumps(t *testing.T) {
	cores := func(r float64) float64 {
		if r >= 500 {
			return 0.2 + 1e-4*r
		}
		return 0.01 + 1e-4*r
	}
	s := curveSummary([]float64{100, 300, 500, 700}, cores, 0.002, func(float64) float64 { return 0.1 })
	cpu := CostCurves(s)[0]
	if cpu.Fits {
		t.Fatalf("a jump of 0.19 cores at 500 req/s fits: %+v", cpu)
	}
	bill, _ := Bill([]CostCurve{cpu}, FleetLoad{Rates: []float64{400}})
	if !strings.Contains(bill[0].Refused, "do not lie on a line") {
		t.Errorf("a bill from a line that does not fit: %+v", bill[0])
	}
	if _, err := Bill(nil, FleetLoad{Rates: []float64{400}}); err != ErrNoCurve {
		t.Errorf("no curve: %v", err)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
