package forward

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/skydns/snapshot"
)

// LiveFlags are the settings that etcd can change while skydns runs, by
// flag name. The record at ConfigKey(prefix, zone, flag) holds the value,
// in its "text", as the flag would take it; without a record the flag's
// value holds.
var LiveFlags = []string{FlagUpstream, FlagAllowRecursion, FlagCacheSize, FlagCacheMaxNegativeTTL}

// ConfigName is the DNS name of the record that sets flag for zone:
// ConfigName("upstream", "cluster.local.") is
// "upstream.config.dns.cluster.local.".
func ConfigName(flag, zone string) string {
	return flag + ".config.dns." + strings.TrimPrefix(strings.TrimSuffix(zone, ".")+".", ".")
}

// ConfigKey is the etcd key of the record that sets flag for zone:
// ConfigKey("/skydns", "upstream", "cluster.local.") is
// "/skydns/local/cluster/dns/config/upstream".
func ConfigKey(prefix, flag, zone string) string {
	return contract.Key(prefix, ConfigName(flag, zone))
}

// settings are what a change of the live settings replaces at once.
type settings struct {
	upstream *route
	acl      acl
	cache    *cache
	except   []string // domains not sent to upstream (lower-case FQDNs)
	from     Config   // the values they were made from
}

// excepted says whether name is under one of the except domains.
func (s *settings) excepted(name string) bool {
	for _, d := range s.except {
		if dns.IsSubDomain(d, name) {
			return true
		}
	}
	return false
}

// newSettings builds the settings of cfg, parsed as p. The cache of old
// is kept when its settings are the same.
func (f *Forwarder) newSettings(cfg Config, p parsed, old *settings) (*settings, error) {
	servers, err := f.upstreams(cfg.ResolvConf, p.upstreams)
	if err != nil {
		return nil, err
	}
	s := &settings{upstream: newRoute("", servers), acl: p.acl, except: p.except, from: cfg}
	f.dot.set(p.tls, p.roots)
	if old != nil && old.from.CacheSize == cfg.CacheSize && old.from.CacheMaxNegativeTTL == cfg.CacheMaxNegativeTTL && old.from.ServeStale == cfg.ServeStale {
		s.cache = old.cache
		return s, nil
	}
	if s.cache, err = newCache(cfg.CacheSize, cfg.MaxTTL, cfg.CacheMaxNegativeTTL, cfg.ServeStale, f.metrics); err != nil {
		return nil, fmt.Errorf("--%s: %w", FlagCacheSize, err)
	}
	return s, nil
}

// withLive returns base with the values the records of zone in snap set
// (base itself when there is no snapshot yet).
func withLive(base Config, snap *snapshot.Snapshot, zone string) (Config, error) {
	cfg := base
	cfg.Upstreams, cfg.AllowRecursion = slices.Clone(cfg.Upstreams), slices.Clone(cfg.AllowRecursion)
	if snap == nil {
		return cfg, nil
	}
	var errs []error
	for _, flag := range LiveFlags {
		entries := snap.Exact(ConfigName(flag, zone))
		if len(entries) == 0 {
			continue
		}
		key, value := ConfigKey(snap.Prefix(), flag, zone), entries[0].Record.Text
		if err := checkedSet(&cfg, flag, value); err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", key, value, err))
		}
	}
	return cfg, errors.Join(errs...)
}

// checkedSet sets flag to value in cfg if cfg stays valid (flag by flag,
// so that an error is blamed on the record that caused it).
func checkedSet(cfg *Config, flag, value string) error {
	next := *cfg
	if err := setLive(&next, flag, value); err != nil {
		return err
	}
	if _, err := next.parse(); err != nil {
		return err
	}
	*cfg = next
	return nil
}

// setLive sets the field of cfg that flag names to value.
func setLive(cfg *Config, flag, value string) error {
	var err error
	switch flag {
	case FlagUpstream:
		cfg.Upstreams = splitList(value)
	case FlagAllowRecursion:
		cfg.AllowRecursion = splitList(value)
	case FlagCacheSize:
		cfg.CacheSize, err = strconv.Atoi(strings.TrimSpace(value))
	case FlagCacheMaxNegativeTTL:
		cfg.CacheMaxNegativeTTL, err = time.ParseDuration(strings.TrimSpace(value))
	}
	return err
}

// splitList splits a comma-separated list, as a repeatable flag's value.
func splitList(value string) []string {
	var out []string
	for _, v := range strings.Split(value, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// SetLiveFrom applies the live settings of zone's dns/config records in
// snap (see LiveFlags). Settings that do not parse leave every setting as
// it is, and are logged once; an unchanged set costs a few lookups and a
// comparison. The server calls it with every snapshot it publishes.
func (f *Forwarder) SetLiveFrom(snap *snapshot.Snapshot, zone string) {
	f.liveMu.Lock()
	defer f.liveMu.Unlock()
	f.liveSnap, f.liveZone = snap, zone
	cfg, err := withLive(f.base, snap, zone)
	var s *settings
	if err == nil {
		s, err = f.changedSettings(cfg)
	}
	f.reportLive(err)
	f.store(s, cfg)
}

// changedSettings builds the settings of cfg, or returns nil when they
// are those in use. Callers hold liveMu.
func (f *Forwarder) changedSettings(cfg Config) (*settings, error) {
	p, err := cfg.parse()
	if err != nil {
		return nil, err
	}
	old := f.settings.Load()
	if sameLive(cfg, old.from) {
		return nil, nil
	}
	return f.newSettings(cfg, p, old)
}

// store puts s, built from cfg, in use (nothing for nil). Callers hold
// liveMu.
func (f *Forwarder) store(s *settings, cfg Config) {
	if s == nil {
		return
	}
	f.settings.Store(s)
	f.bumpGeneration()
	f.logger.Info("forwarding settings changed", "upstreams", s.upstream.addrs, "allow-recursion", cfg.AllowRecursion,
		"cache-size", cfg.CacheSize, "cache-max-negative-ttl", cfg.CacheMaxNegativeTTL)
}

// ReloadFlags are the flags SetBase changes while skydns runs.
var ReloadFlags = append(slices.Clone(LiveFlags), FlagStubDomain)

// SetBase makes cfg's values of ReloadFlags the ones skydns runs with, as
// if it had been started with them; records in etcd still take precedence
// (dns/config over the live flags, --stub-domain over dns/stub). All or
// none: a cfg that does not parse, or whose settings cannot be built,
// changes nothing and is the error.
func (f *Forwarder) SetBase(cfg Config) error {
	p, err := cfg.parse()
	if err != nil {
		return err
	}
	f.liveMu.Lock()
	defer f.liveMu.Unlock()
	base := f.base
	base.Upstreams, base.AllowRecursion = cfg.Upstreams, cfg.AllowRecursion
	base.CacheSize, base.CacheMaxNegativeTTL, base.StubDomains = cfg.CacheSize, cfg.CacheMaxNegativeTTL, cfg.StubDomains
	live, _ := withLive(base, f.liveSnap, f.liveZone) // records that do not parse are left out, and reported by SetLiveFrom
	s, err := f.changedSettings(live)
	if err != nil {
		return err
	}
	f.base = base
	f.store(s, live)
	f.stubMu.Lock()
	defer f.stubMu.Unlock()
	f.staticStubs = f.withoutSelfStubs(p.stubs)
	f.applyStubs()
	return nil
}

// sameLive reports whether a and b have the same live settings.
func sameLive(a, b Config) bool {
	return slices.Equal(a.Upstreams, b.Upstreams) && slices.Equal(a.AllowRecursion, b.AllowRecursion) &&
		a.CacheSize == b.CacheSize && a.CacheMaxNegativeTTL == b.CacheMaxNegativeTTL
}

// reportLive logs err when it differs from the last one. Callers hold liveMu.
func (f *Forwarder) reportLive(err error) {
	var msg string
	if err != nil {
		msg = strings.ReplaceAll(err.Error(), "\n", "; ")
	}
	if msg != "" && !f.liveProblems[msg] {
		f.logger.Warn("ignoring the live forwarding settings in etcd, keeping the last good ones", "problem", msg)
	}
	f.liveProblems = map[string]bool{msg: true}
}
