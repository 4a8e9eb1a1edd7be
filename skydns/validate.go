package skydns

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"

	cs "github.com/kubesky/kubesky/contract/clusterset"
	"github.com/kubesky/kubesky/internal/logging"
	"github.com/kubesky/kubesky/skydns/querylog"
	"github.com/kubesky/kubesky/skydns/rewrite"
	"github.com/kubesky/kubesky/skydns/template"
	"github.com/kubesky/kubesky/skydns/transfer"
)

// Validate checks c and normalizes its zones (lower case, fully
// qualified). Every error names the flag at fault; several are joined on
// one line with "; ".
func (c *Config) Validate() error {
	c.Forward.ListenAddrs = []string{c.DNSAddr}
	c.Forward.MaxTTL = time.Duration(c.MaxTTL) * time.Second
	zonesErr := c.normalizeZones()
	if zonesErr == nil {
		zonesErr = c.normalizeZoneFallthrough()
	}
	errs := []error{
		checkListenAddr("--dns-addr", c.DNSAddr),
		checkUDPSockets(c.UDPSockets),
		checkFastPathAnswers(c.FastPathAnswers),
		checkGCPercent(c.GCPercent),
		checkMemoryLimitFactor(c.MemoryLimitFactor),
		c.TCP.validate(),
		checkListenAddr("--http-addr", c.HTTPAddr),
		c.NodeLocal.validate(c.DNSAddr),
		checkHealthSocket(c.HealthSocket),
		zonesErr,
		checkPrefix(c.Prefix),
		checkClustersetPrefix(c.ClustersetPrefix, c.Prefix),
		checkClusterID(c.ClusterID, c.ClustersetPrefix),
		c.ClustersetEtcd.ValidateOptional(c.ClustersetPrefix != "", "--clusterset-prefix"),
		checkTTL(c.ClustersetTTL),
		checkTTL(c.TTL),
		checkMaxTTL(c.MaxTTL),
		checkPodRecords(c.PodRecords),
		checkPodNamespaces(c.PodNamespaces),
		checkAutopath(c.Autopath, c.PodRecords),
		checkRewrites(c.Rewrites),
		checkTemplates(c.Templates),
		c.checkEtcd(),
		checkLogLevel(c.LogLevel),
		checkLogFormat(c.LogFormat),
		c.checkQueryLog(),
		checkPositive("--shutdown-timeout", c.ShutdownTimeout.Seconds()),
		checkPositive("--etcd-probe-interval", c.EtcdProbeInterval.Seconds()),
		checkNotNegative("--etcd-stall-after", c.EtcdStallAfter),
		checkNotNegative("--etcd-relist-jitter", c.EtcdRelistJitter),
		checkNotNegative("--lameduck", c.Lameduck),
		checkNotNegative("--max-stale", c.MaxStale),
		c.checkTransfer(),
		c.Dnstap.validate(),
		c.TLS.validate(),
	}
	if zonesErr == nil { // the keys' zones must be served
		errs = append(errs, c.loadDNSSECKeys())
	}
	if checkListenAddr("--dns-addr", c.DNSAddr) == nil {
		errs = append(errs, c.Forward.Validate())
	}
	if _, err := c.RRL.Limiter(); err != nil {
		errs = append(errs, err)
	}
	return oneLine(errs)
}

// oneLine joins the non-nil errors with "; " (errors.Join uses newlines,
// and a bad flag must be one line).
func oneLine(errs []error) error {
	var msgs []string
	for _, err := range errs {
		if err != nil {
			msgs = append(msgs, strings.ReplaceAll(err.Error(), "\n", "; "))
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return errors.New(strings.Join(msgs, "; "))
}

// checkListenAddr accepts host:port where host is empty or an IP address
// and port is a number 0-65535.
func checkListenAddr(flag, addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s: %q is not host:port", flag, addr)
	}
	if _, err := netip.ParseAddr(host); host != "" && err != nil {
		return fmt.Errorf("%s: host %q in %q is not an IP address", flag, host, addr)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || port != strconv.FormatUint(n, 10) {
		return fmt.Errorf("%s: port %q in %q is not a number 0-65535", flag, port, addr)
	}
	return nil
}

// normalZone is a zone as given in a flag, fully qualified, in lower case.
func normalZone(z string) string { return dns.Fqdn(strings.ToLower(strings.TrimSpace(z))) }

func (c *Config) normalizeZones() error {
	if len(c.Zones) == 0 {
		return errors.New("--zone: at least one zone is needed")
	}
	var out []string
	for _, z := range c.Zones {
		fqdn := normalZone(z)
		if _, ok := dns.IsDomainName(fqdn); !ok || fqdn == "." || strings.Contains(fqdn, "..") {
			return fmt.Errorf("--zone: %q is not a domain name (the root zone is not allowed)", z)
		}
		out = append(out, fqdn)
	}
	c.Zones = out
	return nil
}

func checkPrefix(prefix string) error {
	if !strings.HasPrefix(prefix, "/") || len(strings.Trim(prefix, "/")) == 0 || strings.Contains(prefix, "//") {
		return fmt.Errorf("--prefix: %q must be an etcd path like /skydns", prefix)
	}
	return nil
}

// checkClustersetPrefix refuses a clusterset prefix that is not an etcd
// path or that overlaps the records' prefix (each reader would take the
// other's values for malformed records).
func checkClustersetPrefix(prefix, records string) error {
	if prefix == "" {
		return nil
	}
	if err := checkPrefix(prefix); err != nil {
		return fmt.Errorf("--clusterset-prefix: %q must be an etcd path like /clusterset", prefix)
	}
	if cs.Overlaps(prefix, records) {
		return fmt.Errorf("--clusterset-prefix: %q overlaps --prefix %q", prefix, records)
	}
	return nil
}

// checkClusterID refuses a clusterset without a valid cluster ID: the
// clusterset IPs skydns answers are its own cluster's.
func checkClusterID(id, clustersetPrefix string) error {
	switch {
	case clustersetPrefix == "" && id != "":
		return errors.New("--cluster-id: only with --clusterset-prefix")
	case clustersetPrefix != "" && !cs.ValidClusterID(id):
		return fmt.Errorf("--cluster-id: %q is not a lower-case DNS label (required with --clusterset-prefix: the cluster whose clusterset IPs are answered)", id)
	}
	return nil
}

func checkTTL(ttl uint32) error {
	if ttl > 1<<31-1 {
		return fmt.Errorf("--ttl: %d is above the largest TTL, 2147483647", ttl)
	}
	return nil
}

func checkMaxTTL(maxTTL int) error {
	if maxTTL < 1 || maxTTL > 1<<31-1 {
		return fmt.Errorf("--max-ttl: %d must be from 1 to 2147483647 seconds", maxTTL)
	}
	return nil
}

func (c *Config) checkEtcd() error {
	var errs []error
	if err := c.Etcd.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Embedded() && !EmbeddedEtcdBuilt {
		errs = append(errs, errors.New("--etcd-endpoints: needed: this skydns is built without the embedded etcd (-tags noembed)"))
	}
	if c.Embedded() && c.EtcdDataDir == "" {
		errs = append(errs, errors.New("--etcd-data-dir: needed when --etcd-endpoints is empty"))
	}
	if c.Embedded() {
		errs = append(errs, checkListenAddr("--embedded-etcd-addr", c.EmbeddedEtcdAddr))
	}
	return oneLine(errs)
}

func checkLogLevel(level string) error {
	if _, err := logging.ParseLevel(level); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	return nil
}

func checkLogFormat(format string) error {
	if err := logging.CheckFormat(format); err != nil {
		return fmt.Errorf("--log-format: %w", err)
	}
	return nil
}

// checkQueryLog checks --log-queries and --log-queries-sample.
func (c *Config) checkQueryLog() error {
	if _, err := querylog.ParseClasses(c.LogQueries); err != nil {
		return fmt.Errorf("--log-queries: %w", err)
	}
	if err := querylog.CheckSampleRate(c.LogQueriesSample); err != nil {
		return fmt.Errorf("--log-queries-sample: %w", err)
	}
	return nil
}

// checkTransfer checks --transfer-to and --notify.
func (c *Config) checkTransfer() error {
	if _, err := transfer.ParseACL(c.TransferTo); err != nil {
		return fmt.Errorf("--transfer-to: %w", err)
	}
	if _, err := transfer.ParseTargets(c.Notify); err != nil {
		return fmt.Errorf("--notify: %w", err)
	}
	if len(c.Notify) > 0 && len(c.TransferTo) == 0 {
		return errors.New("--notify: needs --transfer-to: a secondary told of a change could not transfer the zone")
	}
	return nil
}

func checkPositive(flag string, v float64) error {
	if v <= 0 {
		return fmt.Errorf("%s: must be positive", flag)
	}
	return nil
}

func checkNotNegative(flag string, d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("%s: %v: must be 0 (off) or more", flag, d)
	}
	return nil
}

func checkGCPercent(n int) error {
	if n < -1 {
		return fmt.Errorf("--gc-percent: %d: want -1 (keep GOGC's setting) or more", n)
	}
	return nil
}

// maxUDPSockets bounds --udp-sockets: each socket has a reader goroutine
// and its own cache of answers.
const maxUDPSockets = 256

func checkUDPSockets(n int) error {
	if n < 1 || n > maxUDPSockets {
		return fmt.Errorf("--udp-sockets: %d: want 1 to %d", n, maxUDPSockets)
	}
	return nil
}

func checkMemoryLimitFactor(f float64) error {
	if f != 0 && !(f >= 1 && f <= 100) {
		return fmt.Errorf("--memory-limit-factor: %g: want 0 (no limit) or 1 to 100 times the live heap", f)
	}
	return nil
}

func checkFastPathAnswers(n int) error {
	if n < 1 {
		return fmt.Errorf("--fast-path-answers: %d: want at least 1 (--fast-path=false turns the fast path off)", n)
	}
	return nil
}

// maxSocketPath is the longest Unix socket path (sun_path, less its NUL).
const maxSocketPath = 107

func checkHealthSocket(path string) error {
	if len(path) > maxSocketPath {
		return fmt.Errorf("--health-socket: %q is longer than %d bytes, the most a Unix socket path may have", path, maxSocketPath)
	}
	return nil
}

func checkRewrites(rules []string) error {
	if _, err := rewrite.ParseAll(rules); err != nil {
		return fmt.Errorf("--rewrite: %w", err)
	}
	return nil
}

func checkTemplates(values []string) error {
	if _, err := template.ParseAll(values); err != nil {
		return fmt.Errorf("--template: %w", err)
	}
	return nil
}
