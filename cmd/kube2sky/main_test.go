package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubesky/kubesky/internal/gotool"
)

// binary is the kube2sky command built once for every test, stamped with
// testVersion as the Makefile stamps its version.
var binary string

// testVersion and testRevision are what the test build stamps, as the
// Makefile stamps the version and the commit.
const (
	testVersion  = "v0.0.0-test"
	testRevision = "0123456789abcdef"
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kube2sky-cmd")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "kube2sky")
	build := gotool.Command("build", "-ldflags", "-X github.com/kubesky/kubesky/internal/version.Version="+testVersion+
		" -X github.com/kubesky/kubesky/internal/version.revision="+testRevision, "-o", binary, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		panic("building kube2sky: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func TestABadFlagExitsWithStatus2AndOneLine(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "cert.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"an unknown flag", []string{"--nope"}, nil, "unknown flag: --nope"},
		{"a malformed number", []string{"--workers=many"}, nil, "--workers"},
		{"a value out of range", []string{"--workers=0"}, nil, "--workers: must be at least 1"},
		{"an invalid zone", []string{"--zone=Not_A_Zone"}, nil, "--zone"},
		{"a bad etcd endpoint", []string{"--etcd-endpoints=127.0.0.1:2379"}, nil, "--etcd-endpoints"},
		{"a bad value from the environment", nil, []string{"KUBE2SKY_TTL=-1"}, "$KUBE2SKY_TTL"},
		{"a positional argument", []string{"extra"}, nil, `unexpected argument "extra"`},
		{"an unknown log format", []string{"--log-format=yaml"}, nil, "--log-format"},
		{"a kube-dns ConfigMap without a namespace", []string{"--kube-dns-configmap=kube-dns"}, nil, "--kube-dns-configmap"},
		{"a DNS Service without a namespace", []string{"--dns-service=kube-dns"}, nil, "--dns-service"},
		{"a missing etcd client certificate", []string{"--etcd-certfile=/nonexistent/cert.pem", "--etcd-keyfile=/nonexistent/key.pem"}, nil, "--etcd-certfile: open /nonexistent/cert.pem"},
		{"an etcd client certificate that is not PEM", []string{"--etcd-certfile=" + notPEM, "--etcd-keyfile=" + notPEM}, nil, "--etcd-certfile " + notPEM},
		{"an etcd CA file without a certificate", []string{"--etcd-cafile=" + notPEM}, nil, "--etcd-cafile: " + notPEM + " holds no PEM certificate"},
		{"two bad flags", []string{"--workers=0", "--prefix=x"}, nil, "--prefix"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), binary, c.args...)
			cmd.Env = append(os.Environ(), c.env...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 2 {
				t.Fatalf("exit: %v, want status 2; stderr %q", err, stderr.String())
			}
			out := stderr.String()
			if strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, "kube2sky: ") || !strings.Contains(out, c.want) {
				t.Errorf("stderr = %q, want one line naming %q", out, c.want)
			}
		})
	}
}

func TestHelpListsTheFlagsAndExits0(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), binary, "--help").Output()
	if err != nil {
		t.Fatalf("--help: %v", err)
	}
	for _, flag := range []string{"--kubeconfig", "--etcd-endpoints", "--zone", "--prefix", "--http-addr", "--workers",
		"--resync-period", "--leader-elect", "--ttl", "--owner-id", "KUBE2SKY_"} {
		if !bytes.Contains(out, []byte(flag)) {
			t.Errorf("--help does not mention %s", flag)
		}
	}
}

func TestVersionPrintsTheVersion(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), binary, "--version").Output()
	if err != nil || string(out) != "kube2sky "+testVersion+"\n" {
		t.Errorf("--version = %q, %v", out, err)
	}
}

// TestItServesHealthWhileTheAPIServerIsAwayAndStopsOnSIGTERM runs the binary
// against an API server and an etcd that do not answer: it keeps running,
// says it is alive but not ready, and exits 0 on SIGTERM.
func TestItServesHealthWhileTheAPIServerIsAwayAndStopsOnSIGTERM(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	writeKubeconfig(t, kubeconfig, "https://127.0.0.1:1")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "--kubeconfig="+kubeconfig, "--etcd-endpoints=http://127.0.0.1:1", "--http-addr=127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := listenAddress(t, stderr)
	if code, _ := httpGet(t, "http://"+addr+"/healthz"); code != 200 {
		t.Errorf("/healthz = %d, want 200", code)
	}
	if code, body := httpGet(t, "http://"+addr+"/readyz"); code != 503 || !strings.Contains(body, "informers not synced") {
		t.Errorf("/readyz = %d %q, want 503 informers not synced", code, body)
	}
	_, metrics := httpGet(t, "http://"+addr+"/metrics")
	buildInfo := regexp.MustCompile(`(?m)^kube2sky_build_info\{goversion="` + regexp.QuoteMeta(runtime.Version()) +
		`",revision="` + testRevision + `",version="` + regexp.QuoteMeta(testVersion) + `"\} 1$`)
	if !buildInfo.MatchString(metrics) {
		t.Errorf("/metrics has no line matching %s", buildInfo)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("after SIGTERM: %v, want exit status 0", err)
	}
}

func writeKubeconfig(t *testing.T, path, server string) {
	t.Helper()
	cfg := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "` + server + `", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

var httpAttr = regexp.MustCompile(`\bhttp=(127\.0\.0\.1:\d+)`)

// listenAddress reads the log until the start line names the HTTP address,
// then keeps draining it in the background.
func listenAddress(t *testing.T, stderr io.Reader) string {
	t.Helper()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := httpAttr.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case addr := <-found:
		return addr
	case <-time.After(20 * time.Second):
		t.Fatal("kube2sky did not log its HTTP address within 20s")
		return ""
	}
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestEveryLineIsJSONWithLogFormatJSON runs the binary at debug level
// against an API server that does not answer until client-go has logged
// (its reflectors start at once): kube2sky's own lines and client-go's are
// JSON.
func TestEveryLineIsJSONWithLogFormatJSON(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	writeKubeconfig(t, kubeconfig, "https://127.0.0.1:1")
	ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "--kubeconfig="+kubeconfig, "--etcd-endpoints=http://127.0.0.1:1",
		"--http-addr=127.0.0.1:0", "--log-format=json", "--log-level=debug")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	sc := bufio.NewScanner(stderr)
	sawClientGo := false
	for !sawClientGo && sc.Scan() {
		var fields map[string]any
		if err := json.Unmarshal(sc.Bytes(), &fields); err != nil || fields["msg"] == nil {
			t.Fatalf("not a JSON log line: %q", sc.Text())
		}
		sawClientGo = fields["component"] == "client-go"
	}
	if !sawClientGo {
		t.Fatalf("no client-go line before the log ended (%v)", sc.Err())
	}
}
