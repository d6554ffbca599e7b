package h1

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
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
		{"lower-case keys", "HTTP/1.1 200 OK\r\ncontent-length: 15\r\nx-request-id: 7\r\n\r\n" + body, true},
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
		"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\nok",
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

// FuzzParseAnswerHead: whatever answer head the event loop takes,
// http.ReadResponse parses alike: the status, the headers (less those
// Connection names for this hop), the framing, and whether the connection
// ends after the answer.
func FuzzParseAnswerHead(f *testing.F) {
	for _, seed := range []string{
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: 1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\nContent-Length: 2\r\n\r\n",
		"HTTP/1.1 503 Service Unavailable\r\nConnection: close, X-Hop\r\nX-Hop: 1\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 204 No Content\r\nDate: Thu, 26 Nov 2026 03:00:00 GMT\r\n\r\n",
		"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n",
		"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: Close\r\n\r\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, head []byte) {
		if !bytes.HasSuffix(head, []byte("\r\n\r\n")) || bytes.Count(head, []byte("\r\n\r\n")) != 1 {
			return
		}
		a, ok := parseAnswerHead(nil, string(head[:len(head)-2]))
		if !ok {
			return
		}
		want, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(head)), nil)
		require.NoError(t, err, "the loop took an answer net/http refuses: %q", head)
		assert.Equal(t, want.StatusCode, a.code)
		assert.Equal(t, want.Close, a.close, "close")
		switch {
		case a.code == http.StatusNoContent || a.code == http.StatusNotModified:
			assert.Equal(t, http.NoBody, want.Body, "no body")
		case a.chunked:
			assert.Equal(t, []string{"chunked"}, want.TransferEncoding)
		default:
			assert.Equal(t, want.ContentLength, a.length)
		}
		// The hop-by-hop headers are not passed on (net/http takes some
		// out itself: Transfer-Encoding, "Connection: close").
		for k, vv := range want.Header {
			switch {
			case IsHopHeader(k):
			case namedIn(a.header["Connection"], k):
				assert.NotContains(t, a.header, k, "named by Connection")
			default:
				assert.Equal(t, vv, a.header[k], k)
			}
		}
		for k := range a.header {
			if !IsHopHeader(k) {
				assert.Contains(t, want.Header, k)
			}
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
		pool := NewPool("backend:80")
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
		req := &Request{Path: "/lint", Host: "backend", Body: []byte(`{}`), Deadline: time.Now().Add(50 * time.Millisecond), MaxBuffered: 32}
		var resp bytes.Buffer
		res, up, _ := pool.exchange(context.Background(), req, newConn(client), &resp)
		switch res {
		case Answered:
			require.GreaterOrEqual(t, up.StatusCode, 200)
			if up.ContentLength >= 0 {
				assert.Equal(t, up.ContentLength, int64(resp.Len()), "the body is as long as it says")
			}
			assert.LessOrEqual(t, resp.Len(), 32)
		case Streaming:
			require.Greater(t, up.ContentLength, int64(32))
			n, _ := io.Copy(io.Discard, up.Body)
			assert.LessOrEqual(t, n, up.ContentLength)
			_ = up.Body.Close()
		}
		if pooled := pool.get(); pooled != nil {
			assert.Zero(t, pooled.br.Buffered(), "a pooled connection has nothing unread")
			_ = pooled.nc.Close()
		}
	})
}

// FuzzAnswerReader: an answer read by the forwarder, arriving in two pieces
// split anywhere (so the head may be cut, which the fast parser leaves to
// http.ReadResponse), is the answer http.ReadResponse reads from the whole
// bytes: the same final status, headers and body; and anything net/http
// cannot read is never passed on as an answer.
func FuzzAnswerReader(f *testing.F) {
	for _, seed := range []string{
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nabc",
		"HTTP/1.1 200 OK\r\n\r\nclose-delimited",
		"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\ncut",
		"HTTP/1.0 500 Oops\r\nX-A: 1\r\nX-A: 2\r\nContent-Length: 0\r\n\r\n",
	} {
		f.Add([]byte(seed), uint16(len(seed)/2))
	}
	f.Fuzz(func(t *testing.T, answer []byte, split uint16) {
		at := int(split) % (len(answer) + 1)
		want, wantBody, wantOK := readWhole(answer)

		pool := NewPool("backend:80")
		client, server := net.Pipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer server.Close()
			req, err := http.ReadRequest(bufio.NewReader(server))
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, req.Body)
			if _, err := server.Write(answer[:at]); err == nil && at < len(answer) {
				_, _ = server.Write(answer[at:])
			}
		}()
		defer func() {
			_ = client.Close()
			<-done
		}()
		req := &Request{Path: "/lint", Host: "backend", Body: []byte(`{}`), Deadline: time.Now().Add(10 * time.Second), MaxBuffered: 64}
		var resp bytes.Buffer
		res, up, err := pool.exchange(context.Background(), req, newConn(client), &resp)
		if !wantOK {
			assert.NotEqual(t, Answered, res, "passed on an answer net/http cannot read: %q", answer)
			if res == Streaming {
				_, rerr := io.Copy(io.Discard, up.Body)
				_ = up.Body.Close()
				assert.Error(t, rerr, "a streamed answer net/http cannot read ends in an error")
			}
			return
		}
		if len(wantBody) > int(req.MaxBuffered) {
			if want.ContentLength < 0 {
				assert.Equal(t, TooLarge, res)
				return
			}
			require.Equal(t, Streaming, res, "err: %v", err)
			got, rerr := io.ReadAll(up.Body)
			_ = up.Body.Close()
			require.NoError(t, rerr)
			resp.Write(got)
		} else {
			require.Equal(t, Answered, res, "err: %v; answer %q", err, answer)
		}
		assert.Equal(t, want.StatusCode, up.StatusCode)
		assert.Equal(t, want.Header, up.Header)
		assert.Equal(t, string(wantBody), resp.String())
	})
}

// readWhole reads the final answer in b as the forwarder's fallback does,
// and reports whether it can be passed on: a final status other than 101,
// and a body read to its end.
func readWhole(b []byte) (*http.Response, []byte, bool) {
	br := bufio.NewReader(bytes.NewReader(b))
	for {
		up, err := http.ReadResponse(br, nil)
		if err != nil {
			return nil, nil, false
		}
		if up.StatusCode >= 200 || up.StatusCode == http.StatusSwitchingProtocols {
			if up.StatusCode == http.StatusSwitchingProtocols {
				return nil, nil, false
			}
			body, err := io.ReadAll(up.Body)
			if err != nil {
				return nil, nil, false
			}
			return up, body, true
		}
	}
}
