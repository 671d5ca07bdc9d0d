package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// LocalKMSBinEnv names the local-kms binary the kproxy-encryption target
// needs, as for kproxy's own tests (internal/testkit/localkms).
const LocalKMSBinEnv = "KPROXY_LOCALKMS_BIN"

// encryptionKeyAlias is the KEK the kproxy-encryption target encrypts under.
const encryptionKeyAlias = "alias/kproxy-bench"

// localKMSRegion is what local-kms writes into key ARNs and kproxy signs for.
const localKMSRegion = "eu-west-1"

// awsEnv is the environment kproxy needs to reach local-kms and the
// bench's SeaweedFS: static credentials (local-kms checks no signature, the
// AWS SDK signs anyway; SeaweedFS checks them, they are its one identity)
// and no instance-metadata lookup.
var awsEnv = []string{"AWS_ACCESS_KEY_ID=" + benchAccessKey, "AWS_SECRET_ACCESS_KEY=" + benchSecretKey, "AWS_EC2_METADATA_DISABLED=true"}

// startLocalKMS runs local-kms on a free loopback port with one symmetric
// key behind encryptionKeyAlias, as a target-like process that stop ends.
func startLocalKMS(ctx context.Context, o *Options, workDir string) (*target, string, error) {
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	endpoint := "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	t := &target{name: "local-kms", logPath: filepath.Join(workDir, "local-kms.log")}
	dataDir := filepath.Join(workDir, "local-kms-data")
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, "", err
	}
	cmd, logf, err := command(o, t.logPath, o.LocalKMSBin, "-addr", strings.TrimPrefix(endpoint, "http://"), "-data", dataDir, "-region", localKMSRegion)
	if err != nil {
		return nil, "", err
	}
	defer logf.Close()
	cmd.Stdout = logf
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("start local-kms %s: %w", o.LocalKMSBin, err)
	}
	t.proc = cmd
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := kmsCall(ctx, endpoint, "ListKeys", map[string]any{}); err == nil {
			break
		}
		if time.Now().After(deadline) || processExited(cmd.Process.Pid) {
			t.stop()
			return nil, "", fmt.Errorf("local-kms did not answer on %s within 20s; log: %s", endpoint, tail(t.logPath))
		}
		time.Sleep(50 * time.Millisecond)
	}
	out, err := kmsCall(ctx, endpoint, "CreateKey", map[string]any{"KeySpec": "SYMMETRIC_DEFAULT", "KeyUsage": "ENCRYPT_DECRYPT"})
	if err == nil {
		var created struct{ KeyMetadata struct{ KeyId string } }
		if err = json.Unmarshal(out, &created); err == nil {
			_, err = kmsCall(ctx, endpoint, "CreateAlias", map[string]any{"AliasName": encryptionKeyAlias, "TargetKeyId": created.KeyMetadata.KeyId})
		}
	}
	if err != nil {
		t.stop()
		return nil, "", fmt.Errorf("local-kms key set-up: %w", err)
	}
	return t, endpoint, nil
}

// kmsCall is one request of the AWS KMS JSON protocol, unsigned: local-kms
// does not check signatures, and the bench then needs no AWS SDK.
func kmsCall(ctx context.Context, endpoint, operation string, body map[string]any) ([]byte, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(string(data)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "TrentService."+operation)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("KMS %s: %w", operation, err)
	}
	defer resp.Body.Close()
	var out strings.Builder
	if _, err := bufio.NewReader(resp.Body).WriteTo(&out); err != nil {
		return nil, fmt.Errorf("KMS %s: %w", operation, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("KMS %s: %s: %s", operation, resp.Status, oneLine(out.String(), 200))
	}
	return []byte(out.String()), nil
}

// encryptionYAML is the kproxy-encryption target's section: the bench topic
// encrypted (AES-256-GCM, record values) under a local-kms key.
func encryptionYAML(endpoint, topic string) string {
	return fmt.Sprintf("encryption:\n  kms: {aws_kms: {endpoint: %q, region: %s}}\n  topics: [{match: %q, key: %q, encrypt: [value]}]\n",
		endpoint, localKMSRegion, topic, encryptionKeyAlias)
}

// counterTotal is the sum over every label set of one of kproxy's
// counters, read from its admin /metrics.
func counterTotal(ctx context.Context, adminAddr, name string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+adminAddr+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("scrape %s: %w", adminAddr, err)
	}
	defer resp.Body.Close()
	var n float64
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		line := lines.Text()
		if !strings.HasPrefix(line, name+"{") {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			return 0, fmt.Errorf("metrics line %q: %w", line, err)
		}
		n += v
	}
	return n, lines.Err()
}

// encryptionNote says how many KMS calls kproxy made over the run and for
// how many records: DEKs are reused and cached, so the calls do not grow
// with the record count.
func encryptionNote(ctx context.Context, t *target) string {
	calls, err := counterTotal(ctx, t.adminAddr, "kproxy_encryption_kms_calls_total")
	if err != nil {
		return "KMS calls not read: " + err.Error()
	}
	records, err := counterTotal(ctx, t.adminAddr, "kproxy_encryption_records_total")
	if err != nil {
		return "records not read: " + err.Error()
	}
	return fmt.Sprintf("%.0f KMS calls (kproxy_encryption_kms_calls_total) for %.0f records encrypted or decrypted over the run", calls, records)
}
