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
	ok := machines.Spec{Language: "python", Version: "1.0"}
	tests := []struct {
		name    string
		mutate  func(*machines.Spec)
		wantErr bool
	}{
		{"valid", func(*machines.Spec) {}, false},
		{"no language", func(s *machines.Spec) { s.Language = "" }, true},
		{"no version", func(s *machines.Spec) { s.Version = "" }, true},
		{"port too big", func(s *machines.Spec) { s.Port = 70000 }, true},
		{"negative timeout", func(s *machines.Spec) { s.StartTimeout = -1 }, true},
		{"relative health path", func(s *machines.Spec) { s.HealthPath = "health" }, true},
		{"reserved label", func(s *machines.Spec) { s.Labels = map[string]string{machines.LabelVersion: "x"} }, true},
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
			name:     "default args are the linter's CLI",
			spec:     machines.Spec{Language: "java", Version: "2.0"},
			wantArgs: []string{"-language", "java", "-version", "2.0", "-addr", "127.0.0.1:4000"},
			wantEnv:  map[string]string{},
		},
		{
			name:     "placeholders in args and env",
			spec:     machines.Spec{Language: "python", Version: "1.1", Args: []string{"serve", "--port={port}", "{language}@{version}"}, Env: map[string]string{"LISTEN": "{addr}"}},
			wantArgs: []string{"serve", "--port=4000", "python@1.1"},
			wantEnv:  map[string]string{"LISTEN": "127.0.0.1:4000"},
		},
		{
			name:     "empty args stay empty",
			spec:     machines.Spec{Language: "python", Version: "1.0", Args: []string{}},
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
	s := machines.Spec{Language: "python", Version: "1.0", Labels: map[string]string{"team": "lint"}}
	l := s.MachineLabels("mm", 8080)
	assert.Equal(t, map[string]string{
		"team": "lint", machines.LabelManaged: "true", machines.LabelProvider: "mm",
		machines.LabelLanguage: "python", machines.LabelVersion: "1.0", machines.LabelPort: "8080",
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

// selectingProvider answers Select itself: machines.Select must use it.
type selectingProvider struct {
	machines.Provider
	got map[string]string
}

func (p *selectingProvider) Select(ctx context.Context, labels map[string]string) ([]machines.Machine, error) {
	p.got = labels
	return []machines.Machine{{ID: "from-select"}}, nil
}

func TestSelect(t *testing.T) {
	a := machines.Machine{ID: "a", Labels: map[string]string{"group": "x", "tier": "1"}}
	b := machines.Machine{ID: "b", Labels: map[string]string{"group": "y"}}
	p := listProvider{a, b}
	for _, tt := range []struct {
		labels map[string]string
		want   []string
	}{
		{nil, []string{"a", "b"}},
		{map[string]string{"group": "x"}, []string{"a"}},
		{map[string]string{"group": "x", "tier": "2"}, nil},
		{map[string]string{"tier": ""}, nil},
	} {
		got, err := machines.Select(t.Context(), p, tt.labels)
		require.NoError(t, err)
		var ids []string
		for _, m := range got {
			ids = append(ids, m.ID)
		}
		assert.Equal(t, tt.want, ids, "Select(%v)", tt.labels)
	}

	s := &selectingProvider{Provider: p}
	got, err := machines.Select(t.Context(), s, map[string]string{"group": "x"})
	require.NoError(t, err)
	assert.Equal(t, "from-select", got[0].ID)
	assert.Equal(t, map[string]string{"group": "x"}, s.got)
}

// listProvider lists fixed machines.
type listProvider []machines.Machine

func (p listProvider) Create(context.Context, machines.Spec) (machines.Machine, error) {
	return machines.Machine{}, errors.ErrUnsupported
}
func (p listProvider) Remove(context.Context, string) error { return errors.ErrUnsupported }
func (p listProvider) List(context.Context) ([]machines.Machine, error) {
	return append([]machines.Machine(nil), p...), nil
}
