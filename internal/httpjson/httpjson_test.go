package httpjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecode(t *testing.T) {
	type body struct {
		Name  string `json:"name"`
		Count int    `json:"count"`
	}
	tests := []struct {
		name   string
		in     string
		opts   DecodeOptions
		status int // 0: success
		msg    string
	}{
		{"ok", `{"name":"a","count":2}`, DecodeOptions{}, 0, ""},
		{"unknown field lenient", `{"name":"a","extra":1}`, DecodeOptions{}, 0, ""},
		{"unknown field strict", `{"name":"a","extra":1}`, DecodeOptions{Strict: true}, 400, `unknown field "extra"`},
		{"syntax", `{"name":}`, DecodeOptions{}, 400, "invalid JSON at byte"},
		{"truncated", `{"name":"a"`, DecodeOptions{}, 400, "unexpected end"},
		{"empty", ``, DecodeOptions{}, 400, "empty body"},
		{"type", `{"count":"x"}`, DecodeOptions{}, 400, `field "count" must be int`},
		{"two values", `{} {}`, DecodeOptions{}, 400, "more than one value"},
		{"trailing garbage", `{} x`, DecodeOptions{}, 400, "invalid JSON"},
		{"too large", `{"name":"` + strings.Repeat("a", 50) + `"}`, DecodeOptions{MaxBody: 16}, 413, "limit is 16 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v body
			req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tt.in))
			err := Decode(httptest.NewRecorder(), req, &v, tt.opts)
			if tt.status == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tt.status, StatusOf(err))
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}

func TestWriteError(t *testing.T) {
	rec := httptest.NewRecorder()
	WriteError(rec, fmt.Errorf("wrapped: %w", Errorf(http.StatusConflict, "taken")))
	assert.Equal(t, http.StatusConflict, rec.Code)
	assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	assert.JSONEq(t, `{"status":"error","message":"wrapped: taken"}`, rec.Body.String())

	assert.Equal(t, http.StatusInternalServerError, StatusOf(errors.New("plain")))
}

func TestRequireMethod(t *testing.T) {
	rec := httptest.NewRecorder()
	assert.False(t, RequireMethod(rec, httptest.NewRequest(http.MethodPut, "/", nil), http.MethodPost))
	assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	assert.Equal(t, "POST", rec.Header().Get("Allow"))
	assert.True(t, RequireMethod(httptest.NewRecorder(), httptest.NewRequest(http.MethodHead, "/", nil), http.MethodGet))
}

func TestRecover(t *testing.T) {
	var logged strings.Builder
	logger := slog.New(slog.NewTextHandler(&logged, nil))
	tests := []struct {
		name    string
		handler http.HandlerFunc
		status  int
	}{
		{"panic before answering", func(http.ResponseWriter, *http.Request) { panic("boom") }, http.StatusInternalServerError},
		{"no panic", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }, http.StatusTeapot},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(Recover(tt.handler, logger))
			defer srv.Close()
			resp, err := http.Post(srv.URL+"/x", "application/json", strings.NewReader(`{"secret":"s3cret"}`))
			require.NoError(t, err)
			defer resp.Body.Close()
			assert.Equal(t, tt.status, resp.StatusCode)
			if tt.status == http.StatusInternalServerError {
				var b Body
				require.NoError(t, json.NewDecoder(resp.Body).Decode(&b))
				assert.Equal(t, Body{Status: "error", Message: "internal error"}, b)
				assert.Contains(t, logged.String(), "boom")
				assert.NotContains(t, logged.String(), "s3cret", "the body is never logged")
			}
		})
	}

	t.Run("panic after the header", func(t *testing.T) {
		srv := httptest.NewServer(Recover(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte("partial"))
			panic("late")
		}), logger))
		defer srv.Close()
		resp, err := http.Get(srv.URL)
		if err == nil {
			defer resp.Body.Close()
			_, err = io.ReadAll(resp.Body)
		}
		assert.Error(t, err, "a cut answer is never a whole 200")
	})
}

// TestWriteSetsContentLength: a JSON answer states its length, so that a
// large one is not chunked (a balancer can then stream it past its buffer).
func TestWriteSetsContentLength(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		Write(w, http.StatusOK, map[string]string{"details": strings.Repeat("x", 100<<10)})
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, int64(len(body)), resp.ContentLength)
	assert.Empty(t, resp.TransferEncoding)
}
