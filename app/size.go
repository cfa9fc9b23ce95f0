package app

import (
	"fmt"
	"strconv"
	"strings"
)

// ByteSize is a number of bytes written plainly ("65536") or with a binary
// or decimal suffix ("64KiB", "1MiB", "100KB"). It implements the flag.Value
// (and pflag.Value) interface.
type ByteSize int

// byteUnits lists the suffixes ParseByteSize accepts, longest first so that
// "KiB" is tried before "B".
var byteUnits = []struct {
	suffix string
	mult   int
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9},
	{"B", 1},
}

// ParseByteSize parses s as a whole number of bytes with an optional unit
// suffix: B, KiB, MiB, GiB, KB, MB or GB.
func ParseByteSize(s string) (ByteSize, error) {
	num, mult := strings.TrimSpace(s), 1
	for _, u := range byteUnits {
		if strings.HasSuffix(num, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(num, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 || n > int(^uint(0)>>1)/mult {
		return 0, fmt.Errorf("%q is not a size (want e.g. 65536, 64KiB or 1MiB)", s)
	}
	return ByteSize(n * mult), nil
}

// String formats b with the largest binary unit that divides it exactly.
func (b ByteSize) String() string {
	for i := 2; i >= 0 && b != 0; i-- {
		if u := byteUnits[i]; int(b)%u.mult == 0 {
			return strconv.Itoa(int(b)/u.mult) + u.suffix
		}
	}
	return strconv.Itoa(int(b))
}

// Set parses s into b.
func (b *ByteSize) Set(s string) error {
	v, err := ParseByteSize(s)
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// Type names the flag type in help text.
func (b *ByteSize) Type() string { return "size" }
