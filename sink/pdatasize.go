package sink

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// pdata builds an object for every message of an OTLP payload, and a
// message can take two bytes on the wire: an empty span is a tag and a
// zero length, and pdata holds about 250 bytes for it (measured: 253 for
// an empty span, 222 for an empty attribute, 37 a message in spans of ten
// string attributes). A payload of 4 MiB would take 500 MiB once decoded,
// so what pdata will hold is estimated before it decodes, and charged to
// the memory budget: pdataPerByte per byte (strings, slices) and
// pdataPerMessage per message, counted by walking the payload without
// decoding it (protobuf) or by counting its objects (JSON), and
// pdataPerRequest for the decoder's own state.
const (
	pdataPerByte    = 2
	pdataPerMessage = 320
	pdataPerRequest = 16 << 10

	// maxNesting is the deepest nesting of messages (or JSON objects and
	// arrays) the sink accepts. OTLP's own structure is about ten deep;
	// only attribute values nested in each other go deeper.
	maxNesting = 64
)

// errTooDeep refuses a payload nested deeper than maxNesting.
var errTooDeep = fmt.Errorf("payload nested deeper than %d levels", maxNesting)

// pdataCost returns the bytes pdata is charged for decoding body, an OTLP
// payload in enc, or an error when body is not well-formed enough to
// decode.
func pdataCost(enc encoding, body []byte) (int64, error) {
	var msgs int64
	var err error
	if enc == jsonEncoding {
		msgs, err = jsonObjects(body)
	} else {
		msgs, err = protoMessages(body, 0)
	}
	if err != nil {
		return 0, err
	}
	return pdataPerRequest + int64(len(body))*pdataPerByte + msgs*pdataPerMessage, nil
}

// protoMessages walks b, a protobuf message at the given depth, and
// returns an upper bound on the messages nested in it: without its schema,
// every length-delimited field that is empty or whose bytes are a
// well-formed message counts as one (a string that happens to parse too is
// counted; the bound only errs high). It fails when b is not well-formed
// or nests messages deeper than maxNesting. Each byte is looked at once per
// level of nesting around it, so the walk is linear in len(b).
func protoMessages(b []byte, depth int) (int64, error) {
	var n int64
	for len(b) > 0 {
		num, typ, k := protowire.ConsumeTag(b)
		if k < 0 {
			return 0, protowire.ParseError(k)
		}
		b = b[k:]
		if typ != protowire.BytesType {
			if k = protowire.ConsumeFieldValue(num, typ, b); k < 0 {
				return 0, protowire.ParseError(k)
			}
			b = b[k:]
			continue
		}
		v, k := protowire.ConsumeBytes(b)
		if k < 0 {
			return 0, protowire.ParseError(k)
		}
		b = b[k:]
		if len(v) == 0 {
			n++
			continue
		}
		if depth+1 >= maxNesting {
			if wellFormed, nests := flatMessage(v); wellFormed && nests {
				return 0, errTooDeep
			}
			continue
		}
		inner, err := protoMessages(v, depth+1)
		if errors.Is(err, errTooDeep) {
			return 0, err
		}
		if err == nil {
			n += 1 + inner
		}
	}
	return n, nil
}

// flatMessage reports whether b is a well-formed message, looking at its
// fields but not into them, and whether it has a length-delimited field,
// so that it may nest further.
func flatMessage(b []byte) (wellFormed, nests bool) {
	for len(b) > 0 {
		num, typ, k := protowire.ConsumeTag(b)
		if k < 0 {
			return false, false
		}
		b = b[k:]
		nests = nests || typ == protowire.BytesType
		if k = protowire.ConsumeFieldValue(num, typ, b); k < 0 {
			return false, false
		}
		b = b[k:]
	}
	return true, nests
}

// jsonObjects returns the number of objects and arrays in the JSON text b
// (an upper bound on the messages pdata makes of it). It does not
// validate b beyond its strings and nesting, which pdata does; it fails
// when b nests deeper than maxNesting.
func jsonObjects(b []byte) (int64, error) {
	var n int64
	depth := 0
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			n++
			if depth++; depth > maxNesting {
				return 0, errTooDeep
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return n, nil
}
