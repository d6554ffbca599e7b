package httpserver

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Shutdown drains: a request in flight when ctx ends still gets its answer,
// and new connections are refused afterwards.
func TestRunDrains(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
		_, _ = io.WriteString(w, "done")
	})
	ln, err := Listen("127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	runErr := make(chan error, 1)
	go func() { runErr <- Run(ctx, New(h), ln, 5*time.Second) }()

	type result struct {
		body string
		err  error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := http.Get(url)
		if err != nil {
			got <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		got <- result{string(b), err}
	}()
	<-started
	cancel()
	close(release)
	r := <-got
	require.NoError(t, r.err)
	assert.Equal(t, "done", r.body)
	require.NoError(t, <-runErr)

	_, err = http.Get(url)
	assert.Error(t, err, "the listener must be closed after shutdown")
}

func TestListenError(t *testing.T) {
	_, err := Listen("256.0.0.1:0")
	assert.Error(t, err)
}

// lockedBuffer is a log destination written by the server's goroutines
// and read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer // guarded by mu
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A panicking handler gets its client a 500 answer, not a dropped
// connection, the panic goes to the server's logger, and the server goes
// on serving.
func TestNewRecovers(t *testing.T) {
	h := http.NewServeMux()
	h.HandleFunc("/panic", func(http.ResponseWriter, *http.Request) { panic("boom") })
	h.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	ln, err := Listen("127.0.0.1:0")
	require.NoError(t, err)
	var logged lockedBuffer
	srv := NewWithLogger(h, slog.New(slog.NewTextHandler(&logged, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, srv, ln, time.Second) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	url := "http://" + ln.Addr().String()
	resp, err := http.Get(url + "/panic")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	assert.Contains(t, logged.String(), "panic=boom")
	resp, err = http.Get(url + "/ok")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}
