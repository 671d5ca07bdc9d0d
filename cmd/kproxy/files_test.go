package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/testpki"
)

// TestBrokenFilesFailValidateAndRun: every file a configuration names is
// read by validate as run reads it at start. A missing or wrong one makes
// both exit 1 with a message naming the key and the file; run never
// panics. --skip-file-checks leaves them unread.
func TestBrokenFilesFailValidateAndRun(t *testing.T) {
	dir := t.TempDir()
	_, cert, key, _, _, err := testpki.WriteTestPKI(dir)
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "absent")
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const listeners = "listeners: {bind_host: 127.0.0.1, bootstrap_port: 0, broker_port_base: 0%s}\n"
	for _, tc := range []struct {
		name, body, key, file string
	}{
		{"listener certificate missing",
			fmt.Sprintf(listeners, fmt.Sprintf(", tls: {cert_file: %q, key_file: %q}", missing, key)),
			"listeners.tls.cert_file", missing},
		{"listener key is not PEM",
			fmt.Sprintf(listeners, fmt.Sprintf(", tls: {cert_file: %q, key_file: %q}", cert, notPEM)),
			"listeners.tls.cert_file", notPEM},
		{"client CA bundle missing",
			fmt.Sprintf(listeners, fmt.Sprintf(", tls: {cert_file: %q, key_file: %q, client_auth: require, client_ca_file: %q}", cert, key, missing)),
			"listeners.tls.client_ca_file", missing},
		{"upstream CA bundle without a certificate",
			fmt.Sprintf(listeners, "") + fmt.Sprintf("upstream: {bootstrap_servers: [\"127.0.0.1:1\"], tls: {ca_file: %q}}\n", notPEM),
			"upstream.tls.ca_file", notPEM},
		{"upstream password file missing",
			fmt.Sprintf(listeners, "") + fmt.Sprintf("upstream: {bootstrap_servers: [\"127.0.0.1:1\"], sasl: {mechanism: SCRAM-SHA-512, username: kproxy, password_file: %q}}\n", missing),
			"upstream.sasl.password", missing},
		{"a virtual cluster's listener certificate missing",
			fmt.Sprintf("virtual_clusters:\n  - {name: team-a, topic_prefix: a., group_prefix: a., transactional_id_prefix: a., listeners: {bind_host: 127.0.0.1, bootstrap_port: 0, broker_port_base: 0, tls: {cert_file: %q, key_file: %q}}}\n", missing, key),
			"virtual_clusters[0].listeners.tls.cert_file", missing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := tc.body
			if !strings.Contains(body, "upstream:") {
				body += "upstream: {bootstrap_servers: [\"127.0.0.1:1\"]}\n"
			}
			path := filepath.Join(t.TempDir(), "kproxy.yaml")
			if err := os.WriteFile(path, []byte(body+"admin: {listen: \"127.0.0.1:0\"}\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, cmd := range []string{"validate", "run"} {
				var stdout, stderr bytes.Buffer
				done := make(chan int, 1)
				ctx, cancel := context.WithCancel(context.Background())
				go func() { done <- runEnv(ctx, []string{cmd, "--config", path}, nil, &stdout, &stderr) }()
				select {
				case code := <-done:
					if code != 1 || !strings.Contains(stderr.String(), tc.key) || !strings.Contains(stderr.String(), tc.file) {
						t.Errorf("%s: exit %d, stderr %q; want exit 1 naming %s and %s", cmd, code, stderr.String(), tc.key, tc.file)
					}
					if strings.Contains(stderr.String(), "panic") {
						t.Errorf("%s panicked: %s", cmd, stderr.String())
					}
				case <-time.After(20 * time.Second):
					t.Errorf("%s still running 20s after start with a broken file", cmd)
				}
				cancel()
			}
			var stdout, stderr bytes.Buffer
			if code := runArgs([]string{"validate", "--skip-file-checks", "--config", path}, &stdout, &stderr); code != 0 {
				t.Errorf("validate --skip-file-checks: exit %d, stderr %q", code, stderr.String())
			}
		})
	}
}
