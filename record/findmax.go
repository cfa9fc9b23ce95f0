package record

import (
	"errors"
	"io/fs"
)

// FindMaxFile is the name of a find-max run's result in its directory.
const FindMaxFile = "findmax.json"

// FindMax is what `toll run --find-max` found: for each variant, the
// highest open-model rate it sustained within the SLO.
type FindMax struct {
	// SLOP99MS is the p99 latency a sustained rate kept, in milliseconds;
	// Precision the relative width of the bracket at which a search stops.
	SLOP99MS  float64          `json:"slo_p99_ms"`
	Precision float64          `json:"precision"`
	Variants  []FindMaxVariant `json:"variants"`
}

// FindMaxVariant is one variant's search.
type FindMaxVariant struct {
	Name string `json:"name"`
	// MaxRate is the highest rate that passed (0 if none did); FailedRate
	// the lowest that failed (0 if none did: the search ran out of trials
	// while still rising).
	MaxRate    float64 `json:"max_rate"`
	FailedRate float64 `json:"failed_rate"`
	// Converged is set when the bracket narrowed to the precision asked.
	Converged bool `json:"converged"`
	// SearchS is the time the variant's trials took, in seconds.
	SearchS float64        `json:"search_s"`
	Trials  []FindMaxTrial `json:"trials"`
}

// FindMaxTrial is one trial of a search.
type FindMaxTrial struct {
	// Trial is the trial's index in the results directory.
	Trial    int     `json:"trial"`
	Rate     float64 `json:"rate"`
	Achieved float64 `json:"achieved_rps"`
	P99MS    float64 `json:"p99_ms"`
	Errors   uint64  `json:"errors"`
	Missed   uint64  `json:"missed"`
	Pass     bool    `json:"pass"`
	// Why says what failed, when it did.
	Why string `json:"why,omitempty"`
}

// WriteFindMax writes a find-max result.
func (d *Dir) WriteFindMax(f *FindMax) error { return d.writeJSON(FindMaxFile, f) }

// ReadFindMax reads a find-max result; it returns nil and no error when the
// directory holds none.
func (d *Dir) ReadFindMax() (*FindMax, error) {
	var f FindMax
	if err := d.readJSON(FindMaxFile, &f); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	return &f, nil
}
