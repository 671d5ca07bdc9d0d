package tlsconfig

import (
	"crypto/tls"
	"crypto/x509"
	"sync"
	"time"
)

// DefaultCheckInterval is how often, at most, a Reloader looks at its files.
const DefaultCheckInterval = time.Second

// Reloader keeps a listener's certificate and client-CA pool in step with
// their files. On a handshake it checks, at most once per check interval,
// whether the files' modification time or size changed; if so it loads
// them again. A pair or bundle that fails to load (half-written, mismatched
// key, no certificate) is reported to the OnError hook and the previous one
// stays in use; the next change is tried again. Every pair loaded after
// the first is told to the OnLoad hook. It is safe for concurrent use.
type Reloader struct {
	certFile, keyFile, caFile string
	interval                  time.Duration
	now                       func() time.Time

	mu        sync.Mutex
	lastCheck time.Time
	pairStamp []fileStamp // at the last load attempt, successful or not
	caStamp   []fileStamp
	cert      *tls.Certificate
	pool      *x509.CertPool
	onError   func(error)
	onLoad    func(previous, current *tls.Certificate)
	// base is the config handed out; clientCfg is its clone with the
	// current pool, for GetConfigForClient, rebuilt when pool changes.
	base      *tls.Config
	clientCfg *tls.Config
	cfgPool   *x509.CertPool
}

// newReloader loads the files once; failing that, there is nothing to
// serve, so the error is returned.
func newReloader(certFile, keyFile, caFile string) (*Reloader, error) {
	r := &Reloader{certFile: certFile, keyFile: keyFile, caFile: caFile, interval: DefaultCheckInterval, now: time.Now}
	r.pairStamp = stampFiles(certFile, keyFile)
	cert, err := loadKeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	r.cert = cert
	if caFile != "" {
		r.caStamp = stampFiles(caFile)
		if r.pool, err = LoadCertPool(caFile); err != nil {
			return nil, err
		}
	}
	r.lastCheck = r.now()
	return r, nil
}

// OnError sets the hook told of every failed reload, for logging; the
// error names the files, never key material. Set it before serving.
func (r *Reloader) OnError(fn func(error)) {
	r.mu.Lock()
	r.onError = fn
	r.mu.Unlock()
}

// OnLoad sets the hook told of every key pair loaded after the first
// (Certificate is the first), changed or not, with the one it replaces:
// for logging and metrics. It runs under the Reloader's lock, so hooks
// see loads in order; it must not call the Reloader. Set it before serving.
func (r *Reloader) OnLoad(fn func(previous, current *tls.Certificate)) {
	r.mu.Lock()
	r.onLoad = fn
	r.mu.Unlock()
}

// Certificate is the key pair in use.
func (r *Reloader) Certificate() *tls.Certificate {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cert
}

// GetCertificate is tls.Config.GetCertificate: it checks the files, when
// due, and returns the key pair in use.
func (r *Reloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.maybeReload()
	return r.Certificate(), nil
}

// Reload loads the files now, whether or not they look changed (for a
// SIGHUP). On error the previous certificate and pool stay in use; the
// error is returned, not passed to the hook.
func (r *Reloader) Reload() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastCheck = r.now()
	return r.load(true)
}

// maybeReload reloads changed files if a check is due, and reports a
// failure to the hook outside the lock.
func (r *Reloader) maybeReload() {
	r.mu.Lock()
	now := r.now()
	if now.Sub(r.lastCheck) < r.interval {
		r.mu.Unlock()
		return
	}
	r.lastCheck = now
	err := r.load(false)
	hook := r.onError
	r.mu.Unlock()
	if err != nil && hook != nil {
		hook(err)
	}
}

// load reloads the key pair and the pool, each if forced or if its files'
// stamps changed since the last attempt. r.mu must be held.
func (r *Reloader) load(force bool) error {
	var firstErr error
	if stamp := stampFiles(r.certFile, r.keyFile); force || !sameStamps(stamp, r.pairStamp) {
		r.pairStamp = stamp
		if cert, err := loadKeyPair(r.certFile, r.keyFile); err != nil {
			firstErr = err
		} else {
			previous := r.cert
			r.cert = cert
			if r.onLoad != nil {
				r.onLoad(previous, cert)
			}
		}
	}
	if r.caFile != "" {
		if stamp := stampFiles(r.caFile); force || !sameStamps(stamp, r.caStamp) {
			r.caStamp = stamp
			if pool, err := LoadCertPool(r.caFile); err != nil {
				if firstErr == nil {
					firstErr = err
				}
			} else {
				r.pool = pool
			}
		}
	}
	return firstErr
}

// getConfigForClient is tls.Config.GetConfigForClient for listeners with a
// client-CA file: the handed-out config with the current pool.
func (r *Reloader) getConfigForClient(*tls.ClientHelloInfo) (*tls.Config, error) {
	r.maybeReload()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.clientCfg == nil || r.cfgPool != r.pool {
		c := r.base.Clone()
		c.GetConfigForClient = nil
		c.ClientCAs = r.pool
		r.clientCfg, r.cfgPool = c, r.pool
	}
	return r.clientCfg, nil
}
