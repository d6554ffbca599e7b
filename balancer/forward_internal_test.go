package balancer

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadAnswerFast checks that the fast path parses what it accepts as
// http.ReadResponse does, and leaves everything else untouched for it.
func TestReadAnswerFast(t *testing.T) {
	const body = `{"result":true}`
	tests := []struct {
		name   string
		answer string
		fast   bool
	}{
		{"common", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nDate: Sun, 22 Nov 2026 04:00:00 GMT\r\nContent-Length: 15\r\n\r\n" + body, true},
		{"no reason", "HTTP/1.1 404\r\nContent-Length: 15\r\n\r\n" + body, true},
		{"repeated header, spaces", "HTTP/1.1 500 Internal Server Error\r\nX-A:  1 \r\nX-A: 2\r\nContent-Length: 15\r\nX-B3-Id: 7\r\n\r\n" + body, true},
		{"empty body", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", true},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nf\r\n" + body + "\r\n0\r\n\r\n", false},
		{"close-delimited", "HTTP/1.1 200 OK\r\n\r\n" + body, false},
		{"connection close", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 15\r\n\r\n" + body, false},
		{"HTTP/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 15\r\n\r\n" + body, false},
		{"informational", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 15\r\n\r\n" + body, false},
		{"lower-case key", "HTTP/1.1 200 OK\r\ncontent-length: 15\r\n\r\n" + body, false},
		{"folded", "HTTP/1.1 200 OK\r\nX-A: 1\r\n 2\r\nContent-Length: 15\r\n\r\n" + body, false},
		{"bad length", "HTTP/1.1 200 OK\r\nContent-Length: +15\r\n\r\n" + body, false},
		{"two lengths", "HTTP/1.1 200 OK\r\nContent-Length: 15\r\nContent-Length: 15\r\n\r\n" + body, false},
		{"incomplete head", "HTTP/1.1 200 OK\r\nContent-Length: 15\r\n", false},
		{"bad status", "HTTP/1.1 2x0 OK\r\nContent-Length: 15\r\n\r\n" + body, false},
		{"no content", "HTTP/1.1 204 No Content\r\n\r\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			br := bufio.NewReader(strings.NewReader(tt.answer))
			_, _ = br.Peek(1)
			up, ok := readAnswerFast(br)
			require.Equal(t, tt.fast, ok)
			if !ok {
				assert.Equal(t, len(tt.answer), br.Buffered(), "consumed nothing")
				return
			}
			want, err := http.ReadResponse(bufio.NewReader(strings.NewReader(tt.answer)), nil)
			require.NoError(t, err)
			assert.Equal(t, want.StatusCode, up.StatusCode)
			assert.Equal(t, want.Status, up.Status)
			assert.Equal(t, want.Header, up.Header)
			assert.Equal(t, want.ContentLength, up.ContentLength)
			assert.False(t, want.Close)
			rest, err := io.ReadAll(br)
			require.NoError(t, err)
			assert.Equal(t, tt.answer[len(tt.answer)-int(up.ContentLength):], string(rest))
		})
	}
}
