package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestProgressLine(t *testing.T) {
	var buf bytes.Buffer
	p := newProgressLine(&buf)
	p.update(1)
	p.done()
	assert.Empty(t, buf.String(), "not a terminal: nothing is written")
	assert.Equal(t, 1, p.n)

	p = &progressLine{w: &buf} // a terminal, no throttling
	p.update(5)
	p.update(7)
	p.done()
	assert.Equal(t, "\rkdave: checked 5 release revisions…\rkdave: checked 7 release revisions…\r\033[K", buf.String())
}
