package run

import "github.com/tollperf/toll/scenario"

// ControlScenario returns s with its A/A control added (s.Control, toll run
// --control): a variant named scenario.ControlVariant that is a copy of
// the baseline, run and placed like every other variant. analyze corrects
// each variant's change by the control's (see analyze.Summarize). A
// scenario without Control, or that has its control already, is returned
// as it is.
func ControlScenario(s *scenario.Scenario) *scenario.Scenario {
	if !s.Control {
		return s
	}
	if _, ok := s.Variant(scenario.ControlVariant); ok {
		return s
	}
	c := *s
	base, _ := s.Variant(s.Baseline)
	twin := base
	twin.Name = scenario.ControlVariant
	twin.Description = "the baseline again: an A/A control measured in the same run"
	c.Variants = append(append([]scenario.Variant(nil), s.Variants...), twin)
	return &c
}

// controlOf names s's control variant, or is empty without one.
func controlOf(s *scenario.Scenario) string {
	if _, ok := s.Variant(scenario.ControlVariant); s.Control && ok {
		return scenario.ControlVariant
	}
	return ""
}
