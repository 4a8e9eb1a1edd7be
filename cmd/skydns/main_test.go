package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/internal/gotool"
	"github.com/kubesky/kubesky/internal/polltest"
	"github.com/kubesky/kubesky/skydns/dnssec"
)

var (
	buildMu  sync.Mutex
	binaries = map[string]string{} // by build tags
	buildDir string
)

// testVersion and testRevision are what every test build stamps, as the
// Makefile stamps the version and the commit.
const (
	testVersion  = "v0.0.0-test"
	testRevision = "0123456789abcdef"
	stampVersion = "-X github.com/kubesky/kubesky/internal/version.Version=" + testVersion +
		" -X github.com/kubesky/kubesky/internal/version.revision=" + testRevision
)

// skydnsBinary builds this command once per test run into a temp dir.
func skydnsBinary(t *testing.T) string { return skydnsBinaryTagged(t, "") }

// skydnsBinaryTagged builds this command with the build tags given, once
// per test run.
func skydnsBinaryTagged(t *testing.T, tags string) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if bin, ok := binaries[tags]; ok {
		return bin
	}
	if buildDir == "" {
		dir, err := os.MkdirTemp("", "skydns-main-test")
		if err != nil {
			t.Fatal(err)
		}
		buildDir = dir
	}
	bin := filepath.Join(buildDir, "skydns"+strings.ReplaceAll(tags, ",", "-"))
	out, err := gotool.Command("build", "-tags", tags, "-ldflags", stampVersion, "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -tags %q: %v\n%s", tags, err, out)
	}
	binaries[tags] = bin
	return bin
}

func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// runBinary runs the command to completion with a clean SKYDNS_/ETCD_
// environment plus env, and returns its exit status, stdout and stderr.
func runBinary(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	return runTagged(t, "", env, args...)
}

// runTagged is runBinary for the command built with the build tags given.
func runTagged(t *testing.T, tags string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(skydnsBinaryTagged(t, tags), args...)
	cmd.Env = append(cleanEnv(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running skydns: %v", err)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SKYDNS_") && !strings.HasPrefix(kv, "ETCD_") {
			env = append(env, kv)
		}
	}
	return env
}

func TestBadFlagsExitWithStatus2AndOneLine(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "cert.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ed25519Key := writeKey(t, dir, "Kcluster.local.+015+00002", "cluster.local. 3600 IN DNSKEY 257 3 15 l02Woi0iS8Aa25FQkUd9RMzZHJpBoRQwAQEX1SxZJA4=")
	otherZone, err := dnssec.NewKey(dir, "example.org.", true)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  []string
		args []string
		flag string
	}{
		{"a missing DNSSEC key", nil, []string{"--dnssec-key", filepath.Join(dir, "Kcluster.local.+013+00001.key")}, "--dnssec-key"},
		{"a DNSSEC key of another algorithm", nil, []string{"--dnssec-key", ed25519Key}, "--dnssec-key"},
		{"a DNSSEC key from the environment that names no key file", []string{"SKYDNS_DNSSEC_KEY=" + dir}, nil, "--dnssec-key"},
		{"a DNSSEC key of a zone not served", nil, []string{"--dnssec-key", otherZone}, "--dnssec-key"},
		{"a bad zone", nil, []string{"--zone", "a..b"}, "--zone"},
		{"a bad DNS address", nil, []string{"--dns-addr", "localhost"}, "--dns-addr"},
		{"a bad log level", nil, []string{"--log-level", "chatty"}, "--log-level"},
		{"a bad log format", nil, []string{"--log-format", "yaml"}, "--log-format"},
		{"a bad query log class", nil, []string{"--log-queries", "success"}, "--log-queries"},
		{"a sample rate above 1", nil, []string{"--log-queries", "all", "--log-queries-sample", "2"}, "--log-queries-sample"},
		{"a sample rate of 0", []string{"SKYDNS_LOG_QUERIES_SAMPLE=0"}, nil, "--log-queries-sample"},
		{"a missing TLS file", nil, []string{"--etcd-endpoints", "https://127.0.0.1:2379", "--etcd-certfile", "/nonexistent/cert.pem", "--etcd-keyfile", "/nonexistent/key.pem"}, "--etcd-certfile"},
		{"a TLS file that is not PEM", nil, []string{"--etcd-endpoints", "https://127.0.0.1:2379", "--etcd-certfile", notPEM, "--etcd-keyfile", notPEM}, "--etcd-certfile " + notPEM},
		{"a CA file without a certificate", nil, []string{"--etcd-endpoints", "https://127.0.0.1:2379", "--etcd-cafile", notPEM}, "--etcd-cafile: " + notPEM},
		{"a bad value from the environment", []string{"SKYDNS_HTTP_ADDR=nowhere"}, nil, "--http-addr"},
		{"no TCP connections at all", nil, []string{"--tcp-max-connections", "0"}, "--tcp-max-connections"},
		{"a bad TCP idle timeout from the environment", []string{"SKYDNS_TCP_IDLE_TIMEOUT=-3s"}, nil, "--tcp-idle-timeout"},
		{"zero queries per TCP connection", nil, []string{"--tcp-max-queries=0"}, "--tcp-max-queries"},
		{"a transfer network that is not one", nil, []string{"--transfer-to", "secondary.example"}, "--transfer-to"},
		{"NOTIFY with no one allowed to transfer", []string{"SKYDNS_NOTIFY=127.0.0.1:5353"}, nil, "--notify"},
		{"a missing DNS over TLS certificate", nil, []string{"--tls-addr", "127.0.0.1:0", "--tls-cert", "/nonexistent/cert.pem", "--tls-key", notPEM}, "--tls-cert"},
		{"an unreadable DNS over TLS key", nil, []string{"--tls-addr", "127.0.0.1:0", "--tls-cert", notPEM, "--tls-key", dir}, "--tls-key"},
		{"a DNS over TLS certificate that is not PEM", nil, []string{"--tls-addr", "127.0.0.1:0", "--tls-cert", notPEM, "--tls-key", notPEM}, "--tls-cert " + notPEM},
		{"DNS over TLS without a certificate", []string{"SKYDNS_TLS_ADDR=127.0.0.1:853"}, nil, "--tls-cert"},
		{"a dnstap target that is not unix: or tcp:", nil, []string{"--dnstap", "udp:127.0.0.1:6000"}, "--dnstap"},
		{"an empty dnstap queue", nil, []string{"--dnstap", "unix:/tmp/tap.sock", "--dnstap-queue", "0"}, "--dnstap-queue"},
		{"a DNS over TLS upstream without a server name", nil, []string{"--upstream", "tls://127.0.0.1:853"}, "--upstream"},
		{"an upstream CA file without a certificate", nil, []string{"--upstream-tls-ca", notPEM}, "--upstream-tls-ca"},
		{"a wildcard DNS address in node-local mode", nil, []string{"--node-local-interface", "kubesky0", "--dns-addr", "0.0.0.0:53"}, "--dns-addr"},
		{"a host name as the node-local address", []string{"SKYDNS_NODE_LOCAL_INTERFACE=kubesky0"}, []string{"--dns-addr", "dns.local:53"}, "--dns-addr"},
		{"a peer directory that does not exist", nil, []string{"--node-local-interface", "kubesky0", "--dns-addr", "169.254.20.10:53", "--node-local-peers", "/nonexistent/peers"}, "--node-local-peers"},
		{"a peer directory that is a file", nil, []string{"--node-local-interface", "kubesky0", "--dns-addr", "169.254.20.10:53", "--node-local-peers", notPEM}, "--node-local-peers"},
		{"an unknown flag", nil, []string{"--frobnicate"}, "--frobnicate"},
	}
	for _, tc := range tests {
		t.Run(tc.name+" exits 2 naming "+tc.flag, func(t *testing.T) {
			code, stdout, stderr := runBinary(t, tc.env, tc.args...)
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			if code != 2 || len(lines) != 1 || !strings.Contains(lines[0], tc.flag) || stdout != "" {
				t.Fatalf("exit %d, stderr %q, stdout %q; want 2 and one line naming %s", code, stderr, stdout, tc.flag)
			}
		})
	}
}

func TestWithoutTheEmbeddedEtcdEndpointsAreNeeded(t *testing.T) {
	code, _, stderr := runTagged(t, "noembed", nil, "--dns-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0")
	if code != 2 || !strings.Contains(stderr, "--etcd-endpoints: needed") {
		t.Fatalf("exit %d, stderr %q; want 2 and --etcd-endpoints named", code, stderr)
	}
	deps, err := exec.Command(goTool(), "list", "-tags", "noembed", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(deps), "go.etcd.io/etcd/server/") {
		t.Error("built with -tags noembed, skydns still links etcd's server")
	}
}

func TestVersionAndHelp(t *testing.T) {
	t.Run("--version prints the version stamped at build time", func(t *testing.T) {
		code, stdout, _ := runBinary(t, nil, "--version")
		if code != 0 || stdout != "skydns "+testVersion+"\n" {
			t.Fatalf("exit %d, stdout %q", code, stdout)
		}
	})
	t.Run("--help lists every flag and the environment rule", func(t *testing.T) {
		code, stdout, _ := runBinary(t, nil, "--help")
		for _, want := range []string{"--dns-addr", "--zone", "--etcd-endpoints", "--embedded-etcd-addr", "SKYDNS_DNS_ADDR"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("help lacks %s", want)
			}
		}
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
	})
}

// startReady starts the binary with its embedded etcd, on free ports, and
// waits until it is ready; it returns the process, its log lines and its
// HTTP address.
func startReady(t *testing.T, env []string, args ...string) (*exec.Cmd, <-chan string, string) {
	t.Helper()
	cmd, logs, _, httpAddr := startBinary(t, skydnsBinary(t), env, args...)
	return cmd, logs, httpAddr
}

// startBinary starts bin on free ports (with its embedded etcd unless args
// name endpoints) and waits until it is ready; it returns the process, its
// log lines, and its DNS and HTTP addresses.
func startBinary(t *testing.T, bin string, env []string, args ...string) (*exec.Cmd, <-chan string, string, string) {
	t.Helper()
	cmd, logs := runLogged(t, bin, env, args...)
	dnsAddr := waitLog(t, logs, regexp.MustCompile(`msg="serving DNS" addr=(\S+)`))
	httpAddr := waitLog(t, logs, regexp.MustCompile(`msg="serving HTTP" addr=(\S+)`))
	waitReady(t, httpAddr)
	return cmd, logs, dnsAddr, httpAddr
}

// runLogged starts bin on free ports with its embedded etcd in a temporary
// directory (unless args name endpoints), its environment clean but for
// env; it returns the process, killed when the test ends, and its log
// lines.
func runLogged(t *testing.T, bin string, env []string, args ...string) (*exec.Cmd, <-chan string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--dns-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0",
		"--embedded-etcd-addr", "127.0.0.1:0", "--etcd-data-dir", filepath.Join(t.TempDir(), "etcd")}, args...)...)
	cmd.Env = append(cleanEnv(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	logs := make(chan string, 1000)
	go scanLines(stderr, logs)
	return cmd, logs
}

func TestTheGCTargetIsSetByTheFlagOrLeftToGOGC(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"the default", nil, nil, "25"},
		{"--gc-percent=60", []string{"GOGC=200"}, []string{"--gc-percent=60"}, "60"},
		{"--gc-percent=-1 with GOGC=200", []string{"GOGC=200"}, []string{"--gc-percent=-1"}, "200"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, httpAddr := startReady(t, tc.env, tc.args...)
			if got := scrape(t, httpAddr, "go_gc_gogc_percent"); got != tc.want {
				t.Errorf("go_gc_gogc_percent = %s, want %s", got, tc.want)
			}
		})
	}
}

// scrape returns the value of an unlabelled metric on addr's /metrics.
func scrape(t *testing.T, addr, metric string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if value, ok := strings.CutPrefix(sc.Text(), metric+" "); ok {
			return value
		}
	}
	t.Fatalf("no %s on %s/metrics", metric, addr)
	return ""
}

func TestBuildInfoCarriesTheStampedVersion(t *testing.T) {
	_, _, httpAddr := startReady(t, nil)
	labels := scrapeLabels(t, httpAddr, "skydns_build_info")
	for _, want := range []string{`version="` + testVersion + `"`, `goversion="` + runtime.Version() + `"`, `revision="` + testRevision + `"`} {
		if !strings.Contains(labels, want) {
			t.Errorf("skydns_build_info%s lacks %s", labels, want)
		}
	}
}

// scrapeLabels returns the labels, in braces, of the labelled metric on
// addr's /metrics whose value is 1.
func scrapeLabels(t *testing.T, addr, metric string) string {
	t.Helper()
	re := regexp.MustCompile(`^` + metric + `(\{.*\}) 1$`)
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			return m[1]
		}
	}
	t.Fatalf("no %s{...} 1 on %s/metrics", metric, addr)
	return ""
}

// TestSIGTERMShutsDownCleanly stops the binary with SIGTERM: /readyz
// turns 503 for the lameduck, then the daemon stops and exits 0.
func TestSIGTERMShutsDownCleanly(t *testing.T) {
	const lameduck = 2 * time.Second
	cmd, logs, httpAddr := startReady(t, nil, "--lameduck="+lameduck.String())
	signalled := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitNotReady(t, httpAddr, "shutting down: lameduck")
	waitLog(t, logs, regexp.MustCompile(`msg="(embedded etcd stopped)"`))
	if took := time.Since(signalled); took < lameduck {
		t.Errorf("stopped %v after SIGTERM, before the %v lameduck ended", took, lameduck)
	}
	waitExit0(t, cmd, "SIGTERM")
}

// waitExit0 waits at most 15 s for cmd, signalled with sig, to exit 0.
func waitExit0(t *testing.T, cmd *exec.Cmd, sig string) {
	t.Helper()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("exit after %s: %v", sig, err)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("still running 15s after %s", sig)
	}
}

// TestSIGINTStopsAtOnce stops the binary with SIGINT (Ctrl-C in a
// terminal): no lameduck, the process exits 0 within a second although
// --lameduck is long.
func TestSIGINTStopsAtOnce(t *testing.T) {
	cmd, logs, _ := startReady(t, nil, "--lameduck=30s")
	signalled := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	waitLog(t, logs, regexp.MustCompile(`msg="shutting down" reason="(interrupted: SIGINT)" lameduck=skipped`))
	waitExit0(t, cmd, "SIGINT")
	if took := time.Since(signalled); took > time.Second {
		t.Errorf("exited %v after SIGINT, want within 1s", took)
	}
}

func scanLines(r io.Reader, lines chan<- string) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		lines <- sc.Text()
	}
	close(lines)
}

// waitLog returns the first submatch of the first log line matching re.
func waitLog(t *testing.T, logs <-chan string, re *regexp.Regexp) string {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case line, ok := <-logs:
			if !ok {
				t.Fatalf("skydns exited before logging %s", re)
			}
			if m := re.FindStringSubmatch(line); m != nil {
				return m[1]
			}
		case <-timeout:
			t.Fatalf("no log line matching %s within 30s", re)
		}
	}
}

// waitNotReady polls /readyz until it answers 503 with reason in its body.
func waitNotReady(t *testing.T, addr, reason string) {
	t.Helper()
	waitReadyz(t, addr, http.StatusServiceUnavailable, reason)
}

func waitReady(t *testing.T, addr string) {
	t.Helper()
	waitReadyz(t, addr, http.StatusOK, "")
}

// waitReadyz polls /readyz until it answers code with substr in its body.
func waitReadyz(t *testing.T, addr string, code int, substr string) {
	t.Helper()
	polltest.Within(t, 30*time.Second, fmt.Sprintf("/readyz on %s answering %d %q", addr, code, substr), func() error {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != code || !strings.Contains(string(body), substr) {
			return fmt.Errorf("%d %q", resp.StatusCode, body)
		}
		return nil
	})
}

// TestEveryLineFollowsTheLogFormat starts the binary in each format with
// every query logged, asks one query, and reads the log: every line in
// the format, the query's line among them.
func TestEveryLineFollowsTheLogFormat(t *testing.T) {
	tests := []struct {
		format string
		start  *regexp.Regexp // the HTTP address's line
		query  *regexp.Regexp // the query's line
	}{
		{"text", regexp.MustCompile(`msg="serving HTTP" addr=(\S+)`),
			regexp.MustCompile(`^time=\S+ level=INFO msg=query client=127\.0\.0\.1:\d+ proto=udp id=\d+ name=(nope\.cluster\.local\.) type=A rcode=NXDOMAIN size=\d+ duration=\S+ fast=true$`)},
		{"json", regexp.MustCompile(`"msg":"serving HTTP","addr":"([^"]+)"`),
			regexp.MustCompile(`^\{"time":"[^"]+","level":"INFO","msg":"query","client":"127\.0\.0\.1:\d+","proto":"udp","id":\d+,"name":"(nope\.cluster\.local\.)","type":"A","rcode":"NXDOMAIN","size":\d+,"duration":\d+,"fast":true\}$`)},
	}
	for _, tc := range tests {
		t.Run("--log-format="+tc.format, func(t *testing.T) {
			cmd, logs, dnsAddr := startLogging(t, tc.start, "--log-format", tc.format, "--log-queries", "all")
			askNXDOMAIN(t, dnsAddr)
			waitLog(t, logs, tc.query)
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			for line := range logs { // until the process exits
				checkFormat(t, tc.format, line)
			}
		})
	}
}

// startLogging starts the binary like startReady, with its log's HTTP
// address line matching start, and returns the DNS address it serves.
// Every line read meanwhile is checked to be in args' --log-format.
func startLogging(t *testing.T, start *regexp.Regexp, args ...string) (*exec.Cmd, <-chan string, string) {
	t.Helper()
	cmd, logs := runLogged(t, skydnsBinary(t), nil, append([]string{"--udp-sockets", "1"}, args...)...)
	dnsAddr := waitLog(t, logs, regexp.MustCompile(`serving DNS"?[,\s]"?addr"?[=:]"?([0-9.:]+)`))
	waitReady(t, waitLog(t, logs, start))
	return cmd, logs, dnsAddr
}

// askNXDOMAIN asks for a name of the zone with no records over UDP.
func askNXDOMAIN(t *testing.T, addr string) {
	t.Helper()
	if resp := dnstest.Ask(t, "udp", addr, "nope.cluster.local.", dns.TypeA); resp.Rcode != dns.RcodeNameError {
		t.Fatalf("query nope.cluster.local.: %v, want NXDOMAIN", resp)
	}
}

// checkFormat fails the test unless line is a log line in format.
func checkFormat(t *testing.T, format, line string) {
	t.Helper()
	var fields map[string]any
	isJSON := json.Unmarshal([]byte(line), &fields) == nil && fields["msg"] != nil
	isText := strings.HasPrefix(line, "time=") && strings.Contains(line, " msg=")
	if format == "json" && !isJSON || format == "text" && !isText {
		t.Errorf("not a %s log line: %q", format, line)
	}
}
