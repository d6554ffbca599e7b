//go:build !unix

package balancer

import "net"

// idlePeek has no non-blocking peek on this platform: a connection is
// trusted to be in step while the bytes after each answer are checked.
type idlePeek struct{}

func (p *idlePeek) init(net.Conn) {}

// unsolicited reports false: see idlePeek.
func (c *upConn) unsolicited() bool { return false }

// unsolicited reports false: see idlePeek.
func (p *idlePeek) unsolicited() bool { return false }
