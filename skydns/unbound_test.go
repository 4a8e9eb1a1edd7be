package skydns

import (
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/kubesky/kubesky/internal/freeport"
	"github.com/kubesky/kubesky/internal/polltest"
)

// unboundServer is the start of the server clause every test's Unbound
// shares: in the foreground on 127.0.0.1@port, files in dir, loopback
// clients only.
func unboundServer(port int, dir string) string {
	return fmt.Sprintf(`server:
	interface: 127.0.0.1@%d
	do-ip6: no
	do-daemonize: no
	username: ""
	chroot: ""
	directory: %q
	pidfile: ""
	use-syslog: no
	logfile: ""
	verbosity: 1
	num-threads: 1
	access-control: 127.0.0.0/8 allow
`, port, dir)
}

// unboundDoTConf, after unboundServer, serves the name dotLocalName over
// DNS over TLS only on 127.0.0.1 and refuses every other name, so nothing
// is ever sent beyond the loopback.
const unboundDoTConf = `	tls-port: %[1]d
	tls-service-key: %[2]q
	tls-service-pem: %[3]q
	local-zone: "." refuse
	local-zone: "dot.example." static
	local-data: "www.dot.example. 300 IN A 192.0.2.53"
remote-control:
	control-enable: no
`

// dotLocalName is what the tests' Unbound answers: 192.0.2.53.
const dotLocalName = "www.dot.example."

// startUnboundDoT runs Debian's unbound serving dotLocalName over TLS with
// the certificate and key given, until the test ends, and returns its
// host:port once it completes TLS handshakes.
func startUnboundDoT(t *testing.T, certFile, keyFile string) string {
	t.Helper()
	bin := need(t, "unbound", "unbound")
	dir := t.TempDir()
	port := freeport.Port(t)
	conf := filepath.Join(dir, "unbound.conf")
	if err := os.WriteFile(conf, fmt.Appendf([]byte(unboundServer(port, dir)), unboundDoTConf, port, keyFile, certFile), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-d", "-c", conf)
	cmd.Stderr = t.Output()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	waitHandshake(t, addr)
	return addr
}

// waitHandshake waits until a TLS handshake with addr succeeds (without
// verifying: only that the server is up).
func waitHandshake(t *testing.T, addr string) {
	t.Helper()
	polltest.Eventually(t, "a TLS handshake with "+addr, func() error {
		c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
		if err == nil {
			c.Close()
		}
		return err
	})
}
