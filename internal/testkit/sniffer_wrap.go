package testkit

import "net"

// Wrap records, as Dial does, the connection c a custom dialer opened to
// host (host:port as the client asked for it): for clients whose dialer
// does more than dial, such as a TLS handshake (wrap the TLS connection,
// so the sniffer reads plaintext frames).
func (s *Sniffer) Wrap(c net.Conn, host string) net.Conn {
	s.mu.Lock()
	s.dialed[host]++
	s.mu.Unlock()
	return &sniffConn{Conn: c, s: s, owed: map[int32]owedResp{}}
}
