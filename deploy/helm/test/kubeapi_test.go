package helmtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kproxy/kproxy/internal/testkit"
)

// kubeAPIDirEnv names the directory holding etcd, kube-apiserver and, in
// crds/, the prometheus-operator CRDs (.ci/run builds them from
// test/kubeapi, a module of its own).
const kubeAPIDirEnv = "KPROXY_KUBEAPI_DIR"

// kubeAPI is a real kube-apiserver on loopback, backed by its own etcd.
type kubeAPI struct {
	url    string // https://127.0.0.1:port
	token  string
	client *http.Client
}

// startKubeAPI runs etcd and kube-apiserver from dir on loopback ports,
// with a self-signed serving certificate, a static bearer token and the
// AlwaysAllow authorizer, and returns once /readyz answers ok. Both
// processes stop when the test ends.
func startKubeAPI(t *testing.T, dir string) *kubeAPI {
	t.Helper()
	work := t.TempDir()
	etcdClient, etcdPeer, secure := testkit.FreePort(t), testkit.FreePort(t), testkit.FreePort(t)
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", etcdClient)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", etcdPeer)
	runProcess(t, filepath.Join(dir, "etcd"),
		"--name", "chart-test", "--data-dir", filepath.Join(work, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "chart-test="+peerURL,
		"--listen-metrics-urls", "", "--log-level", "warn", "--unsafe-no-fsync")

	token := rand.Text()
	tokens := testkit.WriteFile(t, "tokens.csv", token+",chart-test,chart-test,system:masters\n")
	key, pub := serviceAccountKeys(t)
	certDir := filepath.Join(work, "certs")
	exited := runProcess(t, filepath.Join(dir, "kube-apiserver"),
		"--etcd-servers", etcdURL,
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", strconv.Itoa(secure),
		"--cert-dir", certDir, // no --tls-cert-file: it writes a self-signed pair here
		"--token-auth-file", tokens, "--authorization-mode", "AlwaysAllow",
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-account-key-file", pub, "--service-account-signing-key-file", key,
		"--service-cluster-ip-range", "10.96.0.0/16",
		// The default reconciler publishes the advertise address as the
		// kubernetes Service's endpoint and refuses a loopback one.
		"--endpoint-reconciler-type", "none",
		"--v", "0")

	api := &kubeAPI{url: fmt.Sprintf("https://127.0.0.1:%d", secure), token: token}
	deadline := time.Now().Add(90 * time.Second)
	for {
		select {
		case <-exited:
			t.Fatal("kube-apiserver exited before it was ready (its log is above)")
		default:
		}
		if api.client == nil {
			api.client = trustSelfSigned(filepath.Join(certDir, "apiserver.crt"))
		}
		if api.client != nil {
			status, body, _ := api.do(t.Context(), http.MethodGet, "/readyz", "", nil)
			if status == http.StatusOK {
				return api
			}
			if time.Now().After(deadline) {
				t.Fatalf("kube-apiserver not ready after 90 s: %d %s", status, body)
			}
		} else if time.Now().After(deadline) {
			t.Fatalf("kube-apiserver wrote no serving certificate in %s in 90 s", certDir)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// runProcess starts bin with args, its output going to the test log, and
// stops it when the test ends. The channel is closed when it exits.
func runProcess(t *testing.T, bin string, args ...string) <-chan struct{} {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stdout = testkit.TestWriter(t)
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	return done
}

// serviceAccountKeys writes the RSA key pair kube-apiserver requires for
// service account tokens (none are issued here).
func serviceAccountKeys(t *testing.T) (keyPath, pubPath string) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	keyPath = testkit.WriteFile(t, "sa.key",
		string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})))
	pubPath = testkit.WriteFile(t, "sa.pub",
		string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})))
	return keyPath, pubPath
}

// trustSelfSigned is a client trusting only the certificates of the PEM
// file kube-apiserver generated (its serving certificate and the CA that
// signed it), or nil while the file is not written yet.
func trustSelfSigned(path string) *http.Client {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(data) {
		return nil
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
}

// do sends one request with the bearer token and returns the status, the
// body and the API server's warnings.
func (a *kubeAPI) do(ctx context.Context, method, path, contentType string, body []byte) (int, []byte, []string) {
	req, err := http.NewRequestWithContext(ctx, method, a.url+path, bytes.NewReader(body))
	if err != nil {
		return 0, []byte(err.Error()), nil
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return 0, []byte(err.Error()), nil
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, out, resp.Header.Values("Warning")
}

// apply server-side applies one object (YAML) at path; dryRun asks the API
// server to validate, default and admit it without storing it.
func (a *kubeAPI) apply(ctx context.Context, path, manifest string, dryRun bool) (int, string, []string) {
	q := "?fieldManager=kproxy-chart-test&force=true&fieldValidation=Strict"
	if dryRun {
		q += "&dryRun=All"
	}
	status, body, warnings := a.do(ctx, http.MethodPatch, path+q, "application/apply-patch+yaml", []byte(manifest))
	return status, statusMessage(body), warnings
}

// statusMessage is the message of a metav1.Status body, or the body.
func statusMessage(body []byte) string {
	var st struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &st) == nil && st.Kind == "Status" {
		return st.Message
	}
	return strings.TrimSpace(string(body))
}
