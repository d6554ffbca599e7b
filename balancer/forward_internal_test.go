package balancer

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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

// FuzzReadAnswerFast: whatever answer head the forwarder's fast parser
// accepts, http.ReadResponse parses alike (status, headers, length), and the
// body left in the reader is the one that follows the head.
func FuzzReadAnswerFast(f *testing.F) {
	for _, seed := range []string{
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n{\"result\":true}",
		"HTTP/1.1 500\r\nX-A: 1\r\nX-A: 2\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}",
		"HTTP/1.1 404 Not Found\r\nX-Tab: a\tb \r\nContent-Length: 3\r\n\r\nabc",
		"HTTP/1.1 200 OK\r\nContent-Length: 007\r\n\r\n1234567",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, answer []byte) {
		br := bufio.NewReaderSize(bytes.NewReader(answer), 16<<10)
		_, _ = br.Peek(1)
		up, ok := readAnswerFast(br)
		if !ok {
			require.Equal(t, min(len(answer), 16<<10), br.Buffered(), "consumed nothing")
			return
		}
		want, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(answer)), nil)
		require.NoError(t, err, "the fast parser took an answer net/http refuses: %q", answer)
		assert.Equal(t, want.StatusCode, up.StatusCode)
		assert.Equal(t, want.Status, up.Status)
		assert.Equal(t, want.Header, up.Header)
		assert.Equal(t, want.ContentLength, up.ContentLength)
		assert.False(t, want.Close)
		wantBody, werr := io.ReadAll(want.Body)
		gotBody := make([]byte, up.ContentLength)
		_, gerr := io.ReadFull(br, gotBody)
		if werr == nil && gerr == nil {
			assert.Equal(t, wantBody, gotBody)
		}
	})
}

// FuzzForwardAnswer runs one exchange of the forwarder against a backend
// that answers with arbitrary bytes: it never panics, an answer passed on
// is framed as it says, and a connection goes back to the pool only with
// nothing left unread on it (so no byte of one answer can reach the next
// client).
func FuzzForwardAnswer(f *testing.F) {
	for _, seed := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstray",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\n\r\nclose-delimited",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"cut",
		"HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n" + strings.Repeat("x", 40),
		"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}",
		"HTTP/1.1 101 Switching Protocols\r\n\r\n",
		"garbage",
	} {
		f.Add([]byte(seed), true)
	}
	f.Fuzz(func(t *testing.T, answer []byte, closeAfter bool) {
		b, err := New(Options{})
		require.NoError(t, err)
		p, err := NewProxy(b, ProxyOptions{MaxResponseBody: 32})
		require.NoError(t, err)
		be, err := newBackend("python", "1.0", "http://backend:80")
		require.NoError(t, err)
		client, server := net.Pipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			req, err := http.ReadRequest(bufio.NewReader(server))
			if err == nil {
				_, _ = io.Copy(io.Discard, req.Body)
				_, _ = server.Write(answer)
			}
			if closeAfter {
				_ = server.Close()
			}
		}()
		defer func() {
			_ = server.Close()
			<-done
		}()
		c := &upConn{nc: client, br: bufio.NewReaderSize(client, 16<<10), bw: bufio.NewWriterSize(client, 16<<10)}
		r := httptest.NewRequest(http.MethodPost, "/lint/python", nil)
		var resp bytes.Buffer
		res, up, _ := p.exchange(r, be, c, time.Now().Add(50*time.Millisecond), r.Header, []byte(`{}`), &resp)
		switch res {
		case answered:
			require.GreaterOrEqual(t, up.StatusCode, 200)
			if up.ContentLength >= 0 {
				assert.Equal(t, up.ContentLength, int64(resp.Len()), "the body is as long as it says")
			}
			assert.LessOrEqual(t, resp.Len(), 32)
		case streaming:
			require.Greater(t, up.ContentLength, int64(32))
			n, _ := io.Copy(io.Discard, up.Body)
			assert.LessOrEqual(t, n, up.ContentLength)
			_ = up.Body.Close()
		}
		if pooled := be.conns.get(); pooled != nil {
			assert.Zero(t, pooled.br.Buffered(), "a pooled connection has nothing unread")
			_ = pooled.nc.Close()
		}
	})
}
