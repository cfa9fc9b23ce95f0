package analyze

import "encoding/json"

// Direction is where a change's 95% interval lies against no change, as
// every report shows it.
type Direction string

// The directions of a change.
const (
	NoDirection   Direction = ""     // no interval
	DirectionUp   Direction = "up"   // the interval lies above 0
	DirectionDown Direction = "down" // the interval lies below 0
	DirectionSame Direction = "same" // the interval holds 0
)

// halfWidth returns half the width of the interval [lo, hi], nil without
// one.
func halfWidth(lo, hi *float64) *float64 {
	if lo == nil || hi == nil {
		return nil
	}
	h := (*hi - *lo) / 2
	return &h
}

// boundsDirection returns the direction of the interval [lo, hi].
func boundsDirection(lo, hi *float64) Direction {
	switch {
	case lo == nil || hi == nil:
		return NoDirection
	case *lo > 0:
		return DirectionUp
	case *hi < 0:
		return DirectionDown
	}
	return DirectionSame
}

// Settle sets d's Direction and half-widths from its interval and verdict.
func (d *Delta) Settle() {
	d.HalfWidth, d.AbsHalfWidth = halfWidth(d.CILow, d.CIHigh), halfWidth(d.AbsCILow, d.AbsCIHigh)
	switch {
	case d.CILow == nil:
		d.Direction = NoDirection
	case !d.Significant:
		d.Direction = DirectionSame
	case *d.CILow > 0:
		d.Direction = DirectionUp
	default:
		d.Direction = DirectionDown
	}
}

// Settle sets r's Direction and half-width from its interval.
func (r *ProfileRow) Settle() {
	r.Direction, r.HalfWidth = boundsDirection(r.CILow, r.CIHigh), halfWidth(r.CILow, r.CIHigh)
}

// Settle sets r's Direction and half-width from its interval.
func (r *ProfileRowChange) Settle() {
	r.Direction, r.HalfWidth = boundsDirection(r.CILow, r.CIHigh), halfWidth(r.CILow, r.CIHigh)
}

// UnmarshalJSON decodes a Delta and settles its direction and
// half-widths, which a summary.json written before they were recorded
// lacks.
func (d *Delta) UnmarshalJSON(b []byte) error {
	type plain Delta
	if err := json.Unmarshal(b, (*plain)(d)); err != nil {
		return err
	}
	d.Settle()
	return nil
}

// UnmarshalJSON decodes a ProfileRow and settles its direction and
// half-width, as Delta's.
func (r *ProfileRow) UnmarshalJSON(b []byte) error {
	type plain ProfileRow
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	r.Settle()
	return nil
}

// UnmarshalJSON decodes a ProfileRowChange and settles its direction and
// half-width, as Delta's.
func (r *ProfileRowChange) UnmarshalJSON(b []byte) error {
	type plain ProfileRowChange
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	r.Settle()
	return nil
}

// RatioBounds returns d's 95% interval as ratios of the variant's value to
// the baseline's (1 + percent/100); false without a relative interval.
func (d *Delta) RatioBounds() (low, high float64, ok bool) {
	if d.CIUnit != "%" || d.CILow == nil || d.CIHigh == nil {
		return 0, 0, false
	}
	return 1 + *d.CILow/100, 1 + *d.CIHigh/100, true
}
