package main

import (
	"bufio"
	"bytes"
	"errors"
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
)

var (
	buildMu  sync.Mutex
	binaries = map[string]string{} // by build tags
	buildDir string
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
	out, err := exec.Command(goTool(), "build", "-tags", tags, "-o", bin, ".").CombinedOutput()
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
	tests := []struct {
		name string
		env  []string
		args []string
		flag string
	}{
		{"a bad zone", nil, []string{"--zone", "a..b"}, "--zone"},
		{"a bad DNS address", nil, []string{"--dns-addr", "localhost"}, "--dns-addr"},
		{"a bad log level", nil, []string{"--log-level", "chatty"}, "--log-level"},
		{"a missing TLS file", nil, []string{"--etcd-endpoints", "https://127.0.0.1:2379", "--etcd-certfile", "/nonexistent/cert.pem", "--etcd-keyfile", "/nonexistent/key.pem"}, "--etcd-certfile"},
		{"a bad value from the environment", []string{"SKYDNS_HTTP_ADDR=nowhere"}, nil, "--http-addr"},
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
	t.Run("--version prints the version", func(t *testing.T) {
		code, stdout, _ := runBinary(t, nil, "--version")
		if code != 0 || stdout != "skydns dev\n" {
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

// TestSIGTERMShutsDownCleanly runs the daemon with its embedded etcd,
// waits until it is ready, and stops it with SIGTERM.
// startReady starts the binary with its embedded etcd, on free ports, and
// waits until it is ready; it returns the process, its log lines and its
// HTTP address.
func startReady(t *testing.T, env []string, args ...string) (*exec.Cmd, <-chan string, string) {
	t.Helper()
	cmd := exec.Command(skydnsBinary(t), append([]string{"--dns-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0",
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
	httpAddr := waitLog(t, logs, regexp.MustCompile(`msg="serving HTTP" addr=(\S+)`))
	waitReady(t, httpAddr)
	return cmd, logs, httpAddr
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

func TestSIGTERMShutsDownCleanly(t *testing.T) {
	cmd, logs, _ := startReady(t, nil)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitLog(t, logs, regexp.MustCompile(`msg="(embedded etcd stopped)"`))
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("still running 15s after SIGTERM")
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

func waitReady(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz on %s not 200 within 30s (last: %v)", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
