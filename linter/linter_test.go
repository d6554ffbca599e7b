package linter_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/linter"
)

func TestConfigEnabled(t *testing.T) {
	tests := []struct {
		name string
		cfg  linter.Config
		code string
		want bool
	}{
		{"zero enables all", linter.Config{}, "E501", true},
		{"select prefix", linter.Config{Select: []string{"E2"}}, "E225", true},
		{"select other", linter.Config{Select: []string{"E2"}}, "E501", false},
		{"ignore exact", linter.Config{Ignore: []string{"W292"}}, "W292", false},
		{"ignore other", linter.Config{Ignore: []string{"W292"}}, "W291", true},
		{"select overrides ignore", linter.Config{Select: []string{"E"}, Ignore: []string{"E50"}}, "E501", true},
		{"select alone decides", linter.Config{Select: []string{"E501"}, Ignore: []string{"E5"}}, "E502", false},
		{"check names", linter.Config{Ignore: []string{"NewlineAtEndOfFile"}}, "NewlineAtEndOfFile", false},
		{"extend-ignore", linter.Config{ExtendIgnore: []string{"W2"}}, "W291", false},
		{"extend-ignore on top of ignore", linter.Config{Ignore: []string{"E5"}, ExtendIgnore: []string{"W2"}}, "E501", false},
		{"extend-ignore beats a shorter select", linter.Config{Select: []string{"E"}, ExtendIgnore: []string{"E501"}}, "E501", false},
		{"extend-ignore wins a tie", linter.Config{Select: []string{"E501"}, ExtendIgnore: []string{"E501"}}, "E501", false},
		{"a longer select beats extend-ignore", linter.Config{Select: []string{"E501"}, ExtendIgnore: []string{"E5"}}, "E501", true},
		{"extend-ignore leaves the rest", linter.Config{Select: []string{"E"}, ExtendIgnore: []string{"E501"}}, "E502", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.cfg.Enabled(tt.code))
		})
	}
}

func TestConfigWithDefaultIgnore(t *testing.T) {
	def := []string{"E226", "W5"}
	tests := []struct {
		name string
		cfg  linter.Config
		code string
		want bool
	}{
		{"default list applies", linter.Config{}, "E226", false},
		{"outside the list", linter.Config{}, "E225", true},
		{"kept by extend-ignore", linter.Config{ExtendIgnore: []string{"E501"}}, "W503", false},
		{"extend-ignore adds", linter.Config{ExtendIgnore: []string{"E501"}}, "E501", false},
		{"replaced by ignore", linter.Config{Ignore: []string{"E501"}}, "E226", true},
		{"replaced by select", linter.Config{Select: []string{"E", "W"}}, "W503", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.cfg.WithDefaultIgnore(def).Enabled(tt.code))
		})
	}
}

func TestRegistry(t *testing.T) {
	r, err := linter.NewRegistry(eofLanguage())
	require.NoError(t, err)
	// Users extend the registry with their own languages.
	require.NoError(t, r.Register(linter.Language{Name: "go", New: func(linter.Config) (linter.Linter, error) {
		return linter.LinterFunc(func(context.Context, linter.Source) ([]linter.Diagnostic, error) { return nil, nil }), nil
	}}))
	assert.Equal(t, []string{"go", "tiny"}, r.Names())
	require.ErrorIs(t, r.Register(eofLanguage()), linter.ErrDuplicateLanguage)
	_, err = r.Lookup("cobol")
	require.ErrorIs(t, err, linter.ErrUnknownLanguage)
	l, err := r.Lookup("tiny")
	require.NoError(t, err)
	assert.Equal(t, "EOF", l.NewlineAtEOF)
	require.Error(t, r.Register(linter.Language{Name: "nofunc"}))

	var zero linter.Registry
	require.NoError(t, zero.Register(eofLanguage()))
}

func TestSort(t *testing.T) {
	ds := []linter.Diagnostic{{Line: 2, Column: 1, Code: "B"}, {Line: 1, Column: 5, Code: "A"}, {Line: 1, Column: 5, Code: "0"}, {Line: 1, Column: 1, Code: "Z"}}
	linter.Sort(ds)
	assert.Equal(t, []linter.Diagnostic{{Line: 1, Column: 1, Code: "Z"}, {Line: 1, Column: 5, Code: "0"}, {Line: 1, Column: 5, Code: "A"}, {Line: 2, Column: 1, Code: "B"}}, ds)
}
