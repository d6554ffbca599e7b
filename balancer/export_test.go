package balancer

// StatusOfError is the status the admin API and the proxy answer an error
// with; exported for the client's tests only.
var StatusOfError = statusOfError

// LoopClients returns how many client connections the Server's event
// loops hold.
func (s *Server) LoopClients() int { return s.h.LoopClients() }
