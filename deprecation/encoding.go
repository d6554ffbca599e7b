package deprecation

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// Text encodings. YAML streams may be UTF-8, UTF-16 or UTF-32; the checker
// works on UTF-8, so decodeText converts the others first. Without a byte
// order mark the encoding is told from the NULs of the first bytes, as the
// YAML specification (5.2) does: an ASCII character encoded in UTF-16 or
// UTF-32 has NUL bytes beside it.

var (
	bomUTF8    = []byte{0xEF, 0xBB, 0xBF}
	bomUTF16BE = []byte{0xFE, 0xFF}
	bomUTF16LE = []byte{0xFF, 0xFE}
	bomUTF32BE = []byte{0x00, 0x00, 0xFE, 0xFF}
	bomUTF32LE = []byte{0xFF, 0xFE, 0x00, 0x00}
)

// errBinary is the error of a stream that holds NUL bytes in no encoding
// YAML allows: an archive, an image, a compiled file.
var errBinary = errors.New("binary data (NUL bytes): not YAML or JSON")

// decodeText returns data as UTF-8 without a byte order mark, and the name
// of the encoding it was in ("" for UTF-8). Data in UTF-8 is returned
// as is (no copy). The error says why data is not text in an encoding YAML
// allows; it wraps errBinary for NUL bytes in UTF-8 data.
func decodeText(data []byte) ([]byte, string, error) {
	switch {
	case bytes.HasPrefix(data, bomUTF32BE):
		return decodeUTF32(data[4:], true)
	case bytes.HasPrefix(data, bomUTF32LE):
		return decodeUTF32(data[4:], false)
	case bytes.HasPrefix(data, bomUTF16BE):
		return decodeUTF16(data[2:], true)
	case bytes.HasPrefix(data, bomUTF16LE):
		return decodeUTF16(data[2:], false)
	case bytes.HasPrefix(data, bomUTF8):
		data = data[3:]
	case len(data) >= 4 && data[0] == 0 && data[1] == 0 && data[2] == 0 && data[3] != 0:
		return decodeUTF32(data, true)
	case len(data) >= 4 && data[0] != 0 && data[1] == 0 && data[2] == 0 && data[3] == 0:
		return decodeUTF32(data, false)
	case len(data) >= 2 && data[0] == 0 && data[1] != 0:
		return decodeUTF16(data, true)
	case len(data) >= 2 && data[0] != 0 && data[1] == 0:
		return decodeUTF16(data, false)
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return nil, "", errBinary
	}
	return data, "", nil
}

func decodeUTF16(data []byte, bigEndian bool) ([]byte, string, error) {
	name := "UTF-16LE"
	if bigEndian {
		name = "UTF-16BE"
	}
	if len(data)%2 != 0 {
		return nil, name, fmt.Errorf("%s: odd number of bytes (%d)", name, len(data))
	}
	units := make([]uint16, len(data)/2)
	for i := range units {
		if bigEndian {
			units[i] = uint16(data[2*i])<<8 | uint16(data[2*i+1])
		} else {
			units[i] = uint16(data[2*i+1])<<8 | uint16(data[2*i])
		}
	}
	out := make([]byte, 0, len(units)+len(units)/4)
	for i := 0; i < len(units); i++ {
		r := rune(units[i])
		if utf16.IsSurrogate(r) {
			if i+1 == len(units) {
				return nil, name, fmt.Errorf("%s: unpaired surrogate at byte %d", name, 2*i)
			}
			if r = utf16.DecodeRune(r, rune(units[i+1])); r == utf8.RuneError {
				return nil, name, fmt.Errorf("%s: unpaired surrogate at byte %d", name, 2*i)
			}
			i++
		}
		out = utf8.AppendRune(out, r)
	}
	return out, name, nil
}

func decodeUTF32(data []byte, bigEndian bool) ([]byte, string, error) {
	name := "UTF-32LE"
	if bigEndian {
		name = "UTF-32BE"
	}
	if len(data)%4 != 0 {
		return nil, name, fmt.Errorf("%s: length %d is not a multiple of 4", name, len(data))
	}
	out := make([]byte, 0, len(data)/4)
	for i := 0; i < len(data); i += 4 {
		var u uint32
		if bigEndian {
			u = uint32(data[i])<<24 | uint32(data[i+1])<<16 | uint32(data[i+2])<<8 | uint32(data[i+3])
		} else {
			u = uint32(data[i+3])<<24 | uint32(data[i+2])<<16 | uint32(data[i+1])<<8 | uint32(data[i])
		}
		if u > utf8.MaxRune || utf16.IsSurrogate(rune(u)) {
			return nil, name, fmt.Errorf("%s: invalid code point %#x at byte %d", name, u, i)
		}
		out = utf8.AppendRune(out, rune(u))
	}
	return out, name, nil
}
