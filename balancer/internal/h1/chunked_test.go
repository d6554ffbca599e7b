package h1

import (
	"bytes"
	"io"
	"net/http/httputil"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestScanChunked(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		done, ok bool
		taken    int
		data     string
		limit    int64
	}{
		{"whole", "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", true, true, 26, "hello world", 100},
		{"extension and upper-case hex", "A;name=v\r\n0123456789\r\n0\r\n\r\n", true, true, 27, "0123456789", 100},
		{"trailers", "2\r\nok\r\n0\r\nX-T: 1\r\nX-U: 2\r\n\r\n", true, true, 28, "ok", 100},
		{"a trailer that reads as a chunk size", "2\r\nok\r\n0\r\n5;a: b\r\n\r\n", true, true, 20, "ok", 100},
		{"bytes after it", "2\r\nok\r\n0\r\n\r\nHTTP/1.1", true, true, 12, "ok", 100},
		{"cut in a size line", "5\r\nhello\r\n6", false, true, 10, "hello", 100},
		{"cut in data", "5\r\nhel", false, true, 0, "", 100},
		{"cut before the trailers end", "2\r\nok\r\n0\r\nX-T: 1\r\n", false, true, 7, "ok", 100},
		{"bare LF", "5\nhello\r\n0\r\n\r\n", false, false, 0, "", 100},
		{"not hex", "5g\r\nhello\r\n0\r\n\r\n", false, false, 0, "", 100},
		{"space before the extension (net/http refuses it)", "0 ;\r\n\r\n", false, false, 0, "", 100},
		{"spaces after the size", "2 \r\nok\r\n0\r\n\r\n", true, true, 13, "ok", 100},
		{"empty size", "\r\nhello\r\n0\r\n\r\n", false, false, 0, "", 100},
		{"data not ended by CRLF", "5\r\nhelloXX0\r\n\r\n", false, false, 0, "", 100},
		{"over the limit", "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", false, false, 0, "", 10},
		{"huge size", "fffffffffffffffff\r\n", false, false, 0, "", 1 << 62},
		{"trailer without a colon", "0\r\nnocolon\r\n\r\n", false, false, 0, "", 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			taken, size, done, ok := scanChunked([]byte(tt.in), tt.limit)
			assert.Equal(t, tt.ok, ok, "ok")
			assert.Equal(t, tt.done, done, "done")
			if ok {
				// Whole, or its whole chunks so far.
				assert.Equal(t, tt.taken, taken)
				assert.Equal(t, int64(len(tt.data)), size)
				b := []byte(tt.in)
				n := decodeChunks(b[:taken])
				assert.Equal(t, tt.data, string(b[:n]), "decoded in place")
			}
		})
	}
}

// FuzzScanChunked: a body scanChunked takes whole is one net/http's
// chunked reader reads to the same data, decoded in place; its whole
// chunks so far, when it is not whole yet, decode to the size it gave.
func FuzzScanChunked(f *testing.F) {
	f.Add([]byte("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"))
	f.Add([]byte("2;x=y\r\nok\r\n0\r\nX-T: 1\r\n\r\n"))
	f.Add([]byte("0\r\n\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		taken, size, done, ok := scanChunked(b, 1<<20)
		if !ok {
			return
		}
		data := bytes.Clone(b[:taken])
		data = data[:decodeChunks(data)]
		if !done {
			// The whole chunks so far: their data, as scanChunked sized it.
			if int64(len(data)) != size {
				t.Fatalf("size %d, data %d bytes", size, len(data))
			}
			return
		}
		if int64(len(data)) != size {
			t.Fatalf("size %d, data %d bytes", size, len(data))
		}
		want, err := io.ReadAll(httputil.NewChunkedReader(bytes.NewReader(b[:taken])))
		if err != nil {
			t.Fatalf("net/http refuses %q: %v", b[:taken], err)
		}
		if !bytes.Equal(want, data) {
			t.Fatalf("%q: net/http reads %q, we %q", b[:taken], want, data)
		}
	})
}
