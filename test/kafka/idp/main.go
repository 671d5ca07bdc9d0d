// Command idp runs internal/testkit/idp as a process of its own: the test
// identity provider test/kafka/cluster.sh starts before the brokers, whose
// JWKS the brokers' OAUTHBEARER validator reads and whose token endpoint
// kproxy and the Java and librdkafka clients ask for tokens.
//
//	idp -addr 127.0.0.1:19392 -clients clients.json -audience kafka -token-lifetime 20s
//
// The clients file maps client ids to {"secret", "subject", "claims"}. The
// signing key lives in memory only: after a restart the brokers meet an
// unknown kid, refresh the JWKS and validate again; tokens signed before
// the restart stop validating, which a test of this cluster never needs.
// It logs one line per start and exits on SIGTERM or SIGINT.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/kproxy/kproxy/internal/testkit/idp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback)")
	clientsFile := flag.String("clients", "", "JSON file: {\"<client id>\": {\"secret\": ..., \"subject\": ..., \"claims\": {...}}}")
	issuer := flag.String("issuer", "", "iss claim (default: the provider's URL, http://host:port)")
	audience := flag.String("audience", "kafka", "aud claim of issued tokens")
	lifetime := flag.Duration("token-lifetime", time.Hour, "lifetime of issued tokens")
	flag.Parse()
	log.SetFlags(log.LstdFlags | log.LUTC)

	clients, err := readClients(*clientsFile)
	if err != nil {
		log.Fatal(err)
	}
	p, err := idp.Start(idp.Options{Addr: *addr, Issuer: *issuer, Audience: *audience, TokenLifetime: *lifetime, Clients: clients})
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("test identity provider at %s (issuer %s, audience %q, token lifetime %s, %d clients)", p.URL(), p.Issuer(), *audience, *lifetime, len(clients))
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	log.Printf("stopping on %s", <-stop)
	if err := p.Close(); err != nil {
		log.Fatal(err)
	}
}

func readClients(path string) (map[string]idp.Client, error) {
	if path == "" {
		return nil, fmt.Errorf("-clients: required")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("-clients: %w", err)
	}
	var clients map[string]idp.Client
	if err := json.Unmarshal(b, &clients); err != nil {
		return nil, fmt.Errorf("-clients %s: %w", path, err)
	}
	return clients, nil
}
