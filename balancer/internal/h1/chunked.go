package h1

import "bytes"

// scanChunked scans the chunked body (RFC 9112 7.1) at the start of b:
// done when it is whole, with taken the bytes it spans (its trailer
// section included) and size the length of its data; ok false when it is
// malformed or its data would exceed limit. A line must end in CRLF.
func scanChunked(b []byte, limit int64) (taken int, size int64, done, ok bool) {
	for {
		line, rest, found := cutLine(b[taken:])
		if !found {
			return 0, 0, false, len(b)-taken <= maxChunkLine
		}
		n, valid := chunkSize(line)
		if !valid || size+n > limit {
			return 0, 0, false, false
		}
		taken += len(line) + 2
		if n == 0 {
			// The trailer section: field lines up to an empty one.
			for {
				line, _, found := cutLine(b[taken:])
				if !found {
					return 0, 0, false, len(b)-taken <= maxChunkLine
				}
				taken += len(line) + 2
				if len(line) == 0 {
					return taken, size, true, true
				}
				if bytes.IndexByte(line, ':') <= 0 {
					return 0, 0, false, false
				}
			}
		}
		if int64(len(rest)) < n+2 {
			return 0, 0, false, true
		}
		if rest[n] != '\r' || rest[n+1] != '\n' {
			return 0, 0, false, false
		}
		taken += int(n) + 2
		size += n
	}
}

// appendChunked appends the data of the whole chunked body b (as
// scanChunked found it) to dst.
func appendChunked(dst, b []byte) []byte {
	for {
		line, rest, _ := cutLine(b)
		n, _ := chunkSize(line)
		if n == 0 {
			return dst
		}
		dst = append(dst, rest[:n]...)
		b = rest[n+2:]
	}
}

// maxChunkLine bounds a chunk's size line and a trailer line.
const maxChunkLine = 4 << 10

// cutLine cuts b at its first CRLF; found is false when there is none yet.
// A bare LF is no line end: the line is then malformed for its parser.
func cutLine(b []byte) (line, rest []byte, found bool) {
	i := bytes.Index(b, []byte("\r\n"))
	if i < 0 {
		return nil, nil, false
	}
	return b[:i], b[i+2:], true
}

// chunkSize parses a chunk's size line: hexadecimal digits, then spaces or
// an extension after ';' (ignored) that holds no control byte.
func chunkSize(line []byte) (int64, bool) {
	var n int64
	i := 0
	for ; i < len(line) && hexValue(line[i]) >= 0; i++ {
		if i >= 15 {
			return 0, false // over 2^60: no answer we keep
		}
		n = n<<4 | int64(hexValue(line[i]))
	}
	if i == 0 || len(line)+2 >= maxChunkLine { // net/http's limit, CRLF included
		return 0, false
	}
	// As net/http reads it: spaces may end the line, but the extension's
	// ';' must follow the digits at once.
	rest := line[i:]
	if len(bytes.TrimLeft(rest, " \t")) == 0 {
		return n, true
	}
	if rest[0] != ';' {
		return 0, false
	}
	for _, c := range rest {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return 0, false
		}
	}
	return n, true
}

// hexValue is the value of the hexadecimal digit c, or -1.
func hexValue(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
