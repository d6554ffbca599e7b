package machines_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/machines"
)

func TestSpecValidate(t *testing.T) {
	ok := machines.Spec{Name: "python-1.0", Command: "linter"}
	tests := []struct {
		name    string
		mutate  func(*machines.Spec)
		wantErr bool
	}{
		{"valid", func(*machines.Spec) {}, false},
		{"zero spec", func(s *machines.Spec) { *s = machines.Spec{} }, false},
		{"port too big", func(s *machines.Spec) { s.Port = 70000 }, true},
		{"negative timeout", func(s *machines.Spec) { s.StartTimeout = -1 }, true},
		{"relative health path", func(s *machines.Spec) { s.HealthPath = "health" }, true},
		{"reserved label", func(s *machines.Spec) { s.Labels = map[string]string{machines.LabelPort: "x"} }, true},
		{"empty label key", func(s *machines.Spec) { s.Labels = map[string]string{"": "x"} }, true},
		{"user label", func(s *machines.Spec) { s.Labels = map[string]string{"team": "lint"} }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ok
			tt.mutate(&s)
			err := s.Validate()
			if tt.wantErr {
				require.ErrorIs(t, err, machines.ErrInvalidSpec)
			} else {
				require.NoError(t, err)
			}
		})
	}
}

func TestSpecExpand(t *testing.T) {
	tests := []struct {
		name     string
		spec     machines.Spec
		wantArgs []string
		wantEnv  map[string]string
	}{
		{
			name:     "nil args stay nil: the image's own command",
			spec:     machines.Spec{Image: "fleetkit/linter:2.0"},
			wantArgs: nil,
			wantEnv:  map[string]string{},
		},
		{
			name:     "placeholders in args and env",
			spec:     machines.Spec{Args: []string{"serve", "--port={port}", "{language}@{version}"}, Env: map[string]string{"LISTEN": "{addr}"}},
			wantArgs: []string{"serve", "--port=4000", "{language}@{version}"}, // other placeholders are the service's business
			wantEnv:  map[string]string{"LISTEN": "127.0.0.1:4000"},
		},
		{
			name:     "empty args stay empty",
			spec:     machines.Spec{Args: []string{}},
			wantArgs: []string{},
			wantEnv:  map[string]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, env := tt.spec.Expand("127.0.0.1:4000")
			assert.Equal(t, tt.wantArgs, args)
			assert.Equal(t, tt.wantEnv, env)
		})
	}
}

func TestSpecMachineLabelsAndTimeout(t *testing.T) {
	s := machines.Spec{Labels: map[string]string{"team": "lint"}}
	l := s.MachineLabels("mm", 8080)
	assert.Equal(t, map[string]string{
		"team": "lint", machines.LabelManaged: "true", machines.LabelProvider: "mm", machines.LabelPort: "8080",
	}, l)
	l["team"] = "changed"
	assert.Equal(t, "lint", s.Labels["team"], "MachineLabels must copy")
	assert.Equal(t, machines.DefaultStartTimeout, s.Timeout())
	s.StartTimeout = time.Second
	assert.Equal(t, time.Second, s.Timeout())
	assert.Equal(t, "http://127.0.0.1:1", machines.Machine{Address: "127.0.0.1:1"}.URL())
}

func TestWaitReady(t *testing.T) {
	var ready atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" && ready.Load() {
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closedAddr := ln.Addr().String()
	require.NoError(t, ln.Close())

	errGone := errors.New("gone")
	tests := []struct {
		name    string
		addr    string
		opts    machines.WaitOptions
		before  func()
		wantErr error
	}{
		{"healthy after a while", addr, machines.WaitOptions{Path: "/health"}, func() {
			time.AfterFunc(50*time.Millisecond, func() { ready.Store(true) })
		}, nil},
		{"tcp only", addr, machines.WaitOptions{}, nil, nil},
		{"never healthy", addr, machines.WaitOptions{Path: "/other"}, nil, context.DeadlineExceeded},
		{"nothing listens", closedAddr, machines.WaitOptions{}, nil, context.DeadlineExceeded},
		{"alive fails", closedAddr, machines.WaitOptions{Alive: func(context.Context) error { return errGone }}, nil, errGone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ready.Store(false)
			if tt.before != nil {
				tt.before()
			}
			ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
			defer cancel()
			err := machines.WaitReady(ctx, tt.addr, tt.opts)
			if tt.wantErr == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tt.wantErr)
			}
		})
	}
}

func TestSelectorMatches(t *testing.T) {
	labels := map[string]string{"group": "x", "tier": "1"}
	for _, tt := range []struct {
		sel  machines.Selector
		want bool
	}{
		{nil, true},
		{machines.Selector{}, true},
		{machines.Selector{"group": "x"}, true},
		{machines.Selector{"group": "x", "tier": "1"}, true},
		{machines.Selector{"group": "x", "tier": "2"}, false},
		{machines.Selector{"tier": ""}, false},
		{machines.Selector{"zone": ""}, false},
	} {
		assert.Equal(t, tt.want, tt.sel.Matches(labels), "%v", tt.sel)
	}
}
