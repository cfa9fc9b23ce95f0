package analyze

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// MaxLatencyTrackable is the highest latency, in microseconds (one hour),
// that a trial's histogram may be built to track. toll's own histograms
// track up to a minute; a file that claims more was not written by toll,
// and decoding it would allocate a counts array sized by the claim (2^62
// takes hundreds of megabytes from a 44-byte blob).
const MaxLatencyTrackable = 3_600_000_000

// decodeLatency decodes one latency histogram of a trial file (HdrHistogram
// V2 compressed, base64), refusing before it allocates one whose header
// asks for more than toll's bounds.
func decodeLatency(s string) (*hdr.Histogram, error) {
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("latency histogram: %w", err)
	}
	if len(raw) < 8 {
		return nil, fmt.Errorf("latency histogram: %d bytes, too short to be one", len(raw))
	}
	n := binary.BigEndian.Uint32(raw[4:8])
	if int64(n) > int64(len(raw)-8) {
		return nil, fmt.Errorf("latency histogram: says %d bytes, holds %d", n, len(raw)-8)
	}
	z, err := zlib.NewReader(bytes.NewReader(raw[8 : 8+n]))
	if err != nil {
		return nil, fmt.Errorf("latency histogram: %w", err)
	}
	defer z.Close()
	// The header: cookie, payload length, normalizing index offset,
	// significant digits (4 bytes each), lowest and highest trackable
	// values and the conversion ratio (8 bytes each).
	var head [40]byte
	if _, err := io.ReadFull(z, head[:]); err != nil {
		return nil, fmt.Errorf("latency histogram: header: %w", err)
	}
	digits := int32(binary.BigEndian.Uint32(head[12:16]))
	lowest := int64(binary.BigEndian.Uint64(head[16:24]))
	highest := int64(binary.BigEndian.Uint64(head[24:32]))
	switch {
	case digits < 1 || digits > 5:
		return nil, fmt.Errorf("latency histogram: %d significant digits, want 1 to 5", digits)
	case lowest < 1 || highest < 2*lowest:
		return nil, fmt.Errorf("latency histogram: trackable range [%d, %d] is not one", lowest, highest)
	case highest > MaxLatencyTrackable:
		return nil, fmt.Errorf("latency histogram: tracks up to %d µs, beyond toll's bound of %d", highest, int64(MaxLatencyTrackable))
	}
	h, err := hdr.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("latency histogram: %w", err)
	}
	return h, nil
}
