package engine

// countSASL counts one client authentication. A mechanism outside the
// table (but GSSAPI, which passthrough relays) is counted as "other", so
// that clients cannot grow the label.
func (s *Server) countSASL(mechanism, result string) {
	if _, known := s.cfg.Mechanisms().Server(mechanism); !known && mechanism != "GSSAPI" {
		mechanism = "other"
	}
	s.metrics.countSASL(mechanism, result)
}
