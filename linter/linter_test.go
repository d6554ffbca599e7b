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
		{"longer select wins", linter.Config{Select: []string{"E501"}, Ignore: []string{"E5"}}, "E501", true},
		{"longer ignore wins", linter.Config{Select: []string{"E"}, Ignore: []string{"E50"}}, "E501", false},
		{"check names", linter.Config{Ignore: []string{"NewlineAtEndOfFile"}}, "NewlineAtEndOfFile", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.cfg.Enabled(tt.code))
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
