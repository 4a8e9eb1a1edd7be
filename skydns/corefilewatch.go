package skydns

import (
	"bytes"
	"os"
	"time"

	"github.com/kubesky/kubesky/skydns/forward"
)

// BaseSetter is what a Forwarder may also do: take new values of its
// forward.ReloadFlags while serving, from a changed --corefile.
type BaseSetter interface {
	SetBase(cfg forward.Config) error
}

// defaultCorefileInterval is how often --corefile is read for a change.
const defaultCorefileInterval = 5 * time.Second

// watchCorefile reads --corefile every interval until Stop and applies a
// change that skydns can take while serving (checkCorefile).
func (d *Daemon) watchCorefile(forwarder Forwarder) {
	state := d.cfg.corefile
	setter, ok := forwarder.(BaseSetter)
	if state == nil || !ok {
		return
	}
	d.corefileDone = make(chan struct{})
	go func() {
		defer close(d.corefileDone)
		ticker := time.NewTicker(d.cfg.corefileInterval)
		defer ticker.Stop()
		for {
			select {
			case <-d.stopped:
				return
			case <-ticker.C:
				d.checkCorefile(state, setter)
			}
		}
	}()
}

// checkCorefile applies a changed Corefile whole, or keeps the running
// configuration whole and says why, once per change.
func (d *Daemon) checkCorefile(s *corefileState, setter BaseSetter) {
	text, err := os.ReadFile(s.path)
	if err != nil {
		if err.Error() != s.readErr {
			d.logger.Warn("cannot read the Corefile, keeping the running configuration", "corefile", s.path, "err", err)
		}
		s.readErr = err.Error()
		return
	}
	s.readErr = ""
	if bytes.Equal(text, s.text) {
		return
	}
	s.text = text
	cfg, settings, err := s.reload(text)
	if err == nil {
		err = setter.SetBase(cfg)
	}
	if err != nil {
		d.logger.Warn("Corefile refused, keeping the running configuration", "corefile", s.path, "err", err)
		return
	}
	s.settings = settings
	d.logger.Info("Corefile applied", "corefile", s.path, "upstream", cfg.Upstreams, "allow-recursion", cfg.AllowRecursion,
		"cache-size", cfg.CacheSize, "cache-max-negative-ttl", cfg.CacheMaxNegativeTTL, "stub-domain", cfg.StubDomains)
}
