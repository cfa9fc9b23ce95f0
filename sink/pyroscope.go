package sink

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
)

// jfrMagic starts every JFR chunk.
const jfrMagic = "FLR\x00"

// jfrHeaderSize is the size of a JFR chunk header: magic, major and minor
// version, chunk size, constant pool and metadata offsets, start and
// duration in nanoseconds and ticks, tick frequency and flags.
const jfrHeaderSize = 68

// servePyroscope handles a POST to Pyroscope's ingest API, /ingest?name=
// APP{labels}&from=&until=&format=&spyName=..., and counts one profile per
// accepted request. The profile is the whole body or, for a
// multipart/form-data body, its "jfr" part (format=jfr, as the Java agent
// sends it, with an optional "labels" part) or its "profile" part
// (format=pprof, with optional "prev_profile" and "sample_type_config"
// parts). A JFR or pprof profile may itself be gzip-compressed. It is
// checked, not decoded: a JFR recording must start with a whole chunk
// header, a pprof profile must be well-formed protobuf, and a folded
// profile (format=folded, the default) must be lines of a stack and a
// count. The reply is 200 with no body, as Pyroscope's.
func (s *Sink) servePyroscope(w http.ResponseWriter, r *http.Request, raw []byte, l *lease) {
	q := r.URL.Query()
	if q.Get("name") == "" {
		s.reject(w, &requestError{status: http.StatusBadRequest, msg: "Pyroscope ingest: missing application name (query parameter name)"}, noEncoding)
		return
	}
	format := q.Get("format")
	var field string
	switch format {
	case "jfr":
		field = "jfr"
	case "pprof":
		field = "profile"
	case "", "folded", "lines":
	default:
		s.reject(w, &requestError{status: http.StatusUnsupportedMediaType,
			msg: fmt.Sprintf("Pyroscope ingest: unsupported format %q (use jfr, pprof, folded or lines)", format)}, noEncoding)
		return
	}
	body, rerr := s.decodeBody(r, raw, l)
	if rerr != nil {
		s.reject(w, rerr, noEncoding)
		return
	}
	profile, rerr := readFormPart(r.Header.Get("Content-Type"), body, field, l)
	if rerr != nil {
		s.reject(w, rerr, noEncoding)
		return
	}
	if (format == "jfr" || format == "pprof") && bytes.HasPrefix(profile, []byte{0x1f, 0x8b}) {
		if profile, rerr = s.decompress(gzipped, profile, l); rerr != nil {
			rerr.msg = "Pyroscope " + format + " profile: " + rerr.msg
			s.reject(w, rerr, noEncoding)
			return
		}
	}
	var err error
	switch format {
	case "jfr":
		err = checkJFR(profile)
	case "pprof":
		err = checkPprof(profile)
	case "", "folded":
		err = checkFolded(profile)
	case "lines":
		if len(bytes.TrimSpace(profile)) == 0 {
			err = errors.New("empty profile")
		}
	}
	if err != nil {
		if format == "" {
			format = "folded"
		}
		s.reject(w, &requestError{status: http.StatusBadRequest,
			msg: fmt.Sprintf("Pyroscope %s profile: %v", format, err)}, noEncoding)
		return
	}
	s.c.profiles.Add(1)
	w.WriteHeader(http.StatusOK)
}

// readFormPart returns the profile in body: the multipart/form-data part named
// field, when contentType is multipart and field is set, the whole body
// otherwise. The part is read into memory charged to l.
func readFormPart(contentType string, body []byte, field string, l *lease) ([]byte, *requestError) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/form-data" {
		return body, nil
	}
	if field == "" {
		return nil, &requestError{status: http.StatusUnsupportedMediaType,
			msg: "Pyroscope ingest: a multipart body needs format jfr or pprof"}
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil, &requestError{status: http.StatusBadRequest,
				msg: fmt.Sprintf("Pyroscope ingest: multipart body has no %q part", field)}
		}
		if err != nil {
			return nil, &requestError{status: http.StatusBadRequest,
				msg: fmt.Sprintf("Pyroscope ingest: read multipart body: %v", err)}
		}
		if p.FormName() != field {
			continue
		}
		// The parts are views of body, so they fit the decoded limit.
		if rerr := l.grow(int64(len(body))); rerr != nil {
			return nil, rerr
		}
		var buf bytes.Buffer
		buf.Grow(len(body))
		if _, err := buf.ReadFrom(p); err != nil {
			return nil, &requestError{status: http.StatusBadRequest,
				msg: fmt.Sprintf("Pyroscope ingest: read multipart part %q: %v", field, err)}
		}
		return buf.Bytes(), nil
	}
}

// checkJFR checks that b starts with a JFR chunk header whose chunk fits
// in b.
func checkJFR(b []byte) error {
	if !bytes.HasPrefix(b, []byte(jfrMagic)) {
		return errors.New("not a JFR recording (no FLR magic)")
	}
	if len(b) < jfrHeaderSize {
		return fmt.Errorf("JFR chunk header cut short: %d of %d bytes", len(b), jfrHeaderSize)
	}
	if major := binary.BigEndian.Uint16(b[4:]); major < 1 || major > 2 {
		return fmt.Errorf("JFR version %d.%d: want 1.x or 2.x", major, binary.BigEndian.Uint16(b[6:]))
	}
	if size := binary.BigEndian.Uint64(b[8:]); size < jfrHeaderSize || size > uint64(len(b)) {
		return fmt.Errorf("JFR chunk of %d bytes in a recording of %d", size, len(b))
	}
	return nil
}

// checkPprof checks that b is a non-empty, well-formed protobuf message,
// as a pprof Profile is.
func checkPprof(b []byte) error {
	if len(b) == 0 {
		return errors.New("empty profile")
	}
	for len(b) > 0 {
		_, _, n := protowire.ConsumeField(b)
		if n < 0 {
			return fmt.Errorf("not a protobuf message: %w", protowire.ParseError(n))
		}
		b = b[n:]
	}
	return nil
}

// checkFolded checks that b holds folded stacks: lines of frames separated
// by semicolons, a space and a sample count.
func checkFolded(b []byte) error {
	stacks := 0
	for line := 1; len(b) > 0; line++ {
		var ln []byte
		ln, b, _ = bytes.Cut(b, []byte{'\n'})
		ln = bytes.TrimSpace(ln)
		if len(ln) == 0 {
			continue
		}
		i := bytes.LastIndexByte(ln, ' ')
		if i <= 0 {
			return fmt.Errorf("line %d: no sample count after the stack", line)
		}
		if _, err := strconv.ParseUint(string(ln[i+1:]), 10, 64); err != nil {
			return fmt.Errorf("line %d: sample count: %w", line, err)
		}
		stacks++
	}
	if stacks == 0 {
		return errors.New("empty profile")
	}
	return nil
}
