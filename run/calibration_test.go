package run

import (
	"encoding/json"
	"testing"

	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/scenario"
)

// TestManifestRecordsCalibration: a run's manifest carries the calibration
// its intervals take their fixed terms from, as structured figures with
// their provenance, so that a report rendered later applies the same.
func TestManifestRecordsCalibration(t *testing.T) {
	s, err := scenario.Parse("cal.yaml", []byte(`
services:
  - {name: app, command: [toll, app, provider], ready: {http: "http://127.0.0.1:${port:app}/health"}, measure: true}
variants: [{name: baseline}]
load: {target: "http://127.0.0.1:${port:app}", requests: [{path: /}], rate: 10, duration: 1s}
`))
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{s: s}
	data, err := json.Marshal(r.manifest(1))
	if err != nil {
		t.Fatal(err)
	}
	var m record.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	want := record.DefaultCalibration()
	switch c := m.Calibration; {
	case c == nil:
		t.Fatalf("manifest has no calibration: %s", data)
	case c.RunNoisePct != want.RunNoisePct || c.JVMStartNoisePct["cpu_per_request_ms"] != want.JVMStartNoisePct["cpu_per_request_ms"]:
		t.Errorf("manifest calibration %+v, want %+v", *c, want)
	case c.RunNoiseSource == "" || c.JVMStartNoiseSource == "":
		t.Errorf("manifest calibration %+v lacks its provenance", *c)
	}
}
