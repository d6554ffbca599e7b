package testenv

import (
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// atExit records the calls of TestAtExit's functions, which TestMain
// checks once Run has returned.
var atExit struct {
	registered bool
	calls      []string
}

func TestMain(m *testing.M) {
	if AtExit(func() {}) {
		fmt.Fprintln(os.Stderr, "AtExit registered a function outside Run")
		os.Exit(1)
	}
	code := Run(m)
	if atExit.registered && !slices.Equal(atExit.calls, []string{"second", "first"}) {
		fmt.Fprintf(os.Stderr, "AtExit functions ran as %v, want [second first]\n", atExit.calls)
		code = 1
	}
	os.Exit(code)
}

func TestAtExit(t *testing.T) {
	require.True(t, AtExit(func() { atExit.calls = append(atExit.calls, "first") }))
	require.True(t, AtExit(func() { atExit.calls = append(atExit.calls, "second") }))
	atExit.registered = true
	assert.Empty(t, atExit.calls, "called only after the tests")
}

func TestInCI(t *testing.T) {
	for v, want := range map[string]bool{"true": true, "1": true, "false": false, "": false, "yes": false} {
		t.Setenv("CI", v)
		assert.Equal(t, want, InCI(), "CI=%q", v)
	}
}
