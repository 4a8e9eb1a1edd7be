package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// runConfig is the run command's configuration: where the binaries and
// data are, and where each server listens (127.0.0.1 by default).
type runConfig struct {
	binDir          string
	dataDir         string
	dnsAddr         string
	skydnsHTTPAddr  string
	skydnsEtcdAddr  string
	apiEtcdAddr     string
	apiEtcdPeerAddr string
	apiserverPort   int
	kube2skyHTTP    string
	zone            string
	startTimeout    time.Duration
	once            bool
}

func defaultRunConfig() runConfig {
	return runConfig{
		binDir:          executableDir(),
		dataDir:         filepath.Join("data", "demo"),
		dnsAddr:         "127.0.0.1:1053",
		skydnsHTTPAddr:  "127.0.0.1:8081",
		skydnsEtcdAddr:  "127.0.0.1:2379",
		apiEtcdAddr:     "127.0.0.1:2479",
		apiEtcdPeerAddr: "127.0.0.1:2480",
		apiserverPort:   6443,
		kube2skyHTTP:    "127.0.0.1:8082",
		zone:            "cluster.local",
		startTimeout:    2 * time.Minute,
	}
}

// executableDir is where this binary lives: bin/ after `make build`.
func executableDir() string {
	exe, err := os.Executable()
	if err != nil {
		return "bin"
	}
	return filepath.Dir(exe)
}

func (c *runConfig) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.binDir, "bin-dir", c.binDir, "directory holding skydns, kube2sky, etcd and kube-apiserver")
	fs.StringVar(&c.dataDir, "data-dir", c.dataDir, "directory for etcd data, certificates and logs (kept between runs)")
	fs.StringVar(&c.dnsAddr, "dns-addr", c.dnsAddr, "skydns's DNS address, UDP and TCP")
	fs.StringVar(&c.skydnsHTTPAddr, "skydns-http-addr", c.skydnsHTTPAddr, "skydns's /healthz, /readyz and /metrics")
	fs.StringVar(&c.skydnsEtcdAddr, "skydns-etcd-addr", c.skydnsEtcdAddr, "client address of skydns's embedded etcd, which holds the records")
	fs.StringVar(&c.apiEtcdAddr, "apiserver-etcd-addr", c.apiEtcdAddr, "client address of the API server's etcd")
	fs.StringVar(&c.apiEtcdPeerAddr, "apiserver-etcd-peer-addr", c.apiEtcdPeerAddr, "peer address of the API server's etcd")
	fs.IntVar(&c.apiserverPort, "apiserver-port", c.apiserverPort, "kube-apiserver's port on 127.0.0.1")
	fs.StringVar(&c.kube2skyHTTP, "kube2sky-http-addr", c.kube2skyHTTP, "kube2sky's /healthz, /readyz and /metrics")
	fs.StringVar(&c.zone, "zone", c.zone, "cluster zone")
	fs.DurationVar(&c.startTimeout, "start-timeout", c.startTimeout, "how long each server may take to become ready")
	fs.BoolVar(&c.once, "once", false, "stop everything and exit after showing the answers, instead of waiting for Ctrl-C")
}

// validate checks the addresses and that every port is free now, so that
// a second demo (or `make run`) fails with a clear message.
func (c runConfig) validate() error {
	var errs []error
	for flag, addr := range c.listenAddrs() {
		if err := checkFree(addr, flag == "dns-addr"); err != nil {
			errs = append(errs, fmt.Errorf("--%s %s: %w", flag, addr, err))
		}
	}
	if c.startTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--start-timeout must be positive, got %s", c.startTimeout))
	}
	if missing := c.missingBinaries(); len(missing) > 0 {
		errs = append(errs, fmt.Errorf("--bin-dir %s lacks %s: run `make demo`, or `make build tools`", c.binDir, strings.Join(missing, ", ")))
	}
	return errors.Join(errs...)
}

// demoBinaries are the programs run starts, from --bin-dir.
var demoBinaries = []string{"skydns", "etcd", "kube-apiserver", "kube2sky"}

func (c runConfig) missingBinaries() []string {
	var missing []string
	for _, name := range demoBinaries {
		info, err := os.Stat(filepath.Join(c.binDir, name))
		if err != nil || info.IsDir() || info.Mode().Perm()&0o111 == 0 {
			missing = append(missing, name)
		}
	}
	return missing
}

func (c runConfig) listenAddrs() map[string]string {
	return map[string]string{
		"dns-addr":                 c.dnsAddr,
		"skydns-http-addr":         c.skydnsHTTPAddr,
		"skydns-etcd-addr":         c.skydnsEtcdAddr,
		"apiserver-etcd-addr":      c.apiEtcdAddr,
		"apiserver-etcd-peer-addr": c.apiEtcdPeerAddr,
		"apiserver-port":           c.apiserverAddr(),
		"kube2sky-http-addr":       c.kube2skyHTTP,
	}
}

func (c runConfig) apiserverAddr() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(c.apiserverPort))
}

// checkFree fails when addr is not a host:port or something listens on it
// (over TCP, and over UDP too when udp is set).
func checkFree(addr string, udp bool) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return inUse(err)
	}
	defer l.Close()
	if !udp {
		return nil
	}
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return inUse(err)
	}
	return pc.Close()
}

func inUse(err error) error {
	return fmt.Errorf("in use or not bindable (is another demo, `make run` or docker compose up running?): %w", err)
}

// paths are the files and directories under the data dir.
type paths struct {
	root, logs, pki, kubeconfig, skydnsEtcd, apiEtcd, sample string
}

func (c runConfig) paths() paths {
	return paths{
		root:       c.dataDir,
		logs:       filepath.Join(c.dataDir, "logs"),
		pki:        filepath.Join(c.dataDir, "pki"),
		kubeconfig: filepath.Join(c.dataDir, "pki", "kubeconfig"),
		skydnsEtcd: filepath.Join(c.dataDir, "skydns-etcd"),
		apiEtcd:    filepath.Join(c.dataDir, "apiserver-etcd"),
		sample:     filepath.Join(c.dataDir, "api-service.yaml"),
	}
}
