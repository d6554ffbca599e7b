package h1

import (
	"bufio"
	"bytes"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzParseHead: whatever head the fast path accepts, net/http parses
// alike (method, path, query, host, length, close, every header), so taking
// a request on the fast path never changes what the Proxy sees.
func FuzzParseHead(f *testing.F) {
	for _, seed := range []string{
		"POST /lint/python HTTP/1.1\r\nHost: lb\r\nContent-Length: 2\r\n\r\n",
		"POST /lint/java?x=1&y=%20 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/json\r\nContent-Length: 10\r\nConnection: close\r\n\r\n",
		"POST /lint/python HTTP/1.1\r\nHost: [::1]:80\r\nX-A: 1\r\nX-A: 2\r\nUser-Agent: wrk\r\n\r\n",
		"POST /lint/c++ HTTP/1.1\r\nHost: lb\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n",
		"POST /lint/python HTTP/1.1\r\nHost: lb\r\nX-Tab: a\tb \r\n\r\n",
		"POST /lint/python HTTP/1.1\r\nHost: lb\r\nContent-Length: 007\r\n\r\n",
		"POST /lint/python HTTP/1.1\r\nhost: lb\r\ncontent-length: 2\r\nx-trace-id: 1\r\n\r\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, head []byte) {
		if !bytes.HasSuffix(head, []byte("\r\n\r\n")) || bytes.Count(head, []byte("\r\n\r\n")) != 1 {
			return
		}
		got, ok := parseHead(nil, head, "POST /lint/", 1<<20)
		if !ok {
			return
		}
		want, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(head)))
		require.NoError(t, err, "the fast path took a head net/http refuses: %q", head)
		assert.Equal(t, http.MethodPost, want.Method)
		assert.Equal(t, want.URL.Path, got.path)
		assert.Equal(t, want.URL.RawQuery, got.query)
		assert.Equal(t, want.RequestURI, got.target)
		assert.Equal(t, want.Host, got.host)
		assert.Equal(t, want.ContentLength, got.contentLength)
		assert.Equal(t, want.Close, got.close)
		assert.Equal(t, want.Header, got.header)
	})
}

// TestParseHeadRefuses: heads the fast path leaves to net/http.
func TestParseHeadRefuses(t *testing.T) {
	for _, head := range []string{
		"GET /lint/python HTTP/1.1\r\nHost: lb\r\n\r\n",
		"POST /lint/python HTTP/1.0\r\nHost: lb\r\n\r\n",
		"POST /lint/ HTTP/1.1\r\nHost: lb\r\n\r\n",
		"POST /lint/a/b HTTP/1.1\r\nHost: lb\r\n\r\n",
		"POST /lint/.. HTTP/1.1\r\nHost: lb\r\n\r\n",
		"POST /lint/py%74hon HTTP/1.1\r\nHost: lb\r\n\r\n",
		"POST /lint/python#x HTTP/1.1\r\nHost: lb\r\n\r\n",
		"POST /lint/python HTTP/1.1\r\n\r\n",
		"POST /lint/python HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
		"POST /lint/python HTTP/1.1\r\nHost: a b\r\n\r\n",
		"POST /lint/python HTTP/1.1\r\nHost: lb\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n",
		"POST /lint/python HTTP/1.1\r\nHost: lb\r\nContent-Length: -1\r\n\r\n",
		"POST /lint/python HTTP/1.1\r\nHost: lb\r\nContent-Length: 2000000\r\n\r\n",
		"POST /lint/python HTTP/1.1\r\nHost: lb\r\nTransfer-Encoding: chunked\r\n\r\n",
		"POST /lint/python HTTP/1.1\r\nHost: lb\r\nExpect: 100-continue\r\n\r\n",
		"POST /lint/python HTTP/1.1\r\nHost: lb\r\nConnection: upgrade\r\n\r\n",
		"POST /lint/python HTTP/1.1\r\nHost: lb\r\nX-A: 1\r\n folded\r\n\r\n",
		"POST /lint/python HTTP/1.1\r\nHost: lb\r\nX-A: a\x00b\r\n\r\n",
		"POST /lint/python HTTP/1.1\r\nHost: lb\r\nBad Name: 1\r\n\r\n",
	} {
		_, ok := parseHead(nil, []byte(head), "POST /lint/", 1<<20)
		assert.False(t, ok, "%q", head)
	}
}
