//go:build !linux

package h1

import "net"

// serveLoops: the event loop is Linux's; elsewhere Serve serves ln itself.
func (s *Server) serveLoops(net.Listener) (bool, error) { return false, nil }
