package testenv

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestInCI(t *testing.T) {
	for v, want := range map[string]bool{"true": true, "1": true, "false": false, "": false, "yes": false} {
		t.Setenv("CI", v)
		assert.Equal(t, want, InCI(), "CI=%q", v)
	}
}
