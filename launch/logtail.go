package launch

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// maxTailBytes bounds how much of the end of a log tailLines reads.
const maxTailBytes = 64 << 10

// tailLines returns up to the last n lines of the file at path, looking only
// at what follows offset start (the size the file had before the service
// started) and at most at its last maxTailBytes.
func tailLines(path string, start int64, n int) ([]string, error) {
	if n <= 0 {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tail log: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("tail log: %w", err)
	}
	size := info.Size()
	if start > size {
		start = 0 // truncated since
	}
	from := max(start, size-maxTailBytes)
	buf := make([]byte, size-from)
	if _, err := f.ReadAt(buf, from); err != nil && err != io.EOF {
		return nil, fmt.Errorf("tail log: %w", err)
	}
	if from > start {
		// Drop the partial first line.
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		}
	}
	buf = bytes.TrimSuffix(buf, []byte("\n"))
	if len(buf) == 0 {
		return nil, nil
	}
	lines := bytes.Split(buf, []byte("\n"))
	lines = lines[max(0, len(lines)-n):]
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = string(l)
	}
	return out, nil
}
