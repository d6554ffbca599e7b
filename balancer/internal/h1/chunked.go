package h1

import "bytes"

// scanChunked scans the chunked body (RFC 9112 7.1) at the start of b:
// done when it is whole, with taken the bytes it spans (its trailer
// section included) and size the length of its data; ok false when it is
// malformed or its data would exceed limit. When it is not whole yet,
// taken and size are those of its whole data chunks so far. A line must
// end in CRLF.
func scanChunked(b []byte, limit int64) (taken int, size int64, done, ok bool) {
	for {
		line, rest, found := cutLine(b[taken:])
		if !found {
			return taken, size, false, len(b)-taken <= maxChunkLine
		}
		n, valid := chunkSize(line)
		if !valid || size+n > limit {
			return 0, 0, false, false
		}
		if n == 0 {
			// The trailer section: field lines up to an empty one.
			end := taken + len(line) + 2
			for {
				line, _, found := cutLine(b[end:])
				if !found {
					return taken, size, false, len(b)-end <= maxChunkLine
				}
				end += len(line) + 2
				if len(line) == 0 {
					return end, size, true, true
				}
				if bytes.IndexByte(line, ':') <= 0 {
					return 0, 0, false, false
				}
			}
		}
		if int64(len(rest)) < n+2 {
			return taken, size, false, true
		}
		if rest[n] != '\r' || rest[n+1] != '\n' {
			return 0, 0, false, false
		}
		taken += len(line) + 2 + int(n) + 2
		size += n
	}
}

// decodeChunks decodes the chunked body b, whole or its whole data chunks
// so far (as scanChunked took them), in place to b's start, and returns
// the data's length. The last chunk and the trailers are dropped.
func decodeChunks(b []byte) int {
	w, r := 0, 0
	for r < len(b) {
		line, _, _ := cutLine(b[r:])
		n, _ := chunkSize(line)
		if n == 0 {
			break // the last chunk
		}
		data := r + len(line) + 2
		// Down over the size lines, parsed already: copy is a memmove.
		w += copy(b[w:], b[data:data+int(n)])
		r = data + int(n) + 2
	}
	return w
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
