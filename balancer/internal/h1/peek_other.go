//go:build !unix

package h1

import "net"

// IdlePeek has no non-blocking peek on this platform: a connection is
// trusted to be in step while the bytes after each answer are checked.
type IdlePeek struct{}

// Init does nothing: see IdlePeek.
func (p *IdlePeek) Init(net.Conn) {}

// Unsolicited reports false: see IdlePeek.
func (p *IdlePeek) Unsolicited() bool { return false }
