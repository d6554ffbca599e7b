package main

import (
	"fmt"
	"io"
	"os"
	"time"
)

// progressLine shows how many releases a cluster scan has checked, on one
// terminal line rewritten in place. It writes nothing when w is not a
// terminal, so pipes and CI logs stay clean.
type progressLine struct {
	w     io.Writer // nil: not a terminal
	every time.Duration
	last  time.Time
	n     int
}

func newProgressLine(w io.Writer) *progressLine {
	p := &progressLine{every: 100 * time.Millisecond}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.w = w
		}
	}
	return p
}

// update is the scanner's Progress callback; calls never overlap.
func (p *progressLine) update(checked int) {
	p.n = checked
	if p.w == nil || time.Since(p.last) < p.every {
		return
	}
	p.last = time.Now()
	fmt.Fprintf(p.w, "\rkdave: checked %d release revisions…", checked)
}

// done erases the line.
func (p *progressLine) done() {
	if p.w != nil && !p.last.IsZero() {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
