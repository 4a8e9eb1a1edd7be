package skydns

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kubesky/kubesky/internal/gotool"
	"github.com/kubesky/kubesky/internal/polltest"
)

// The dnstap reader of the tests is the dnstap command of the
// github.com/dnstap/golang-dnstap module (a tool of go.mod), built once.
var dnstapBinary struct {
	once sync.Once
	path string
	err  error
}

// buildDnstap builds the dnstap command, once per test binary, into a
// directory of the OS's temp dir.
func buildDnstap(t *testing.T) string {
	t.Helper()
	dnstapBinary.once.Do(func() {
		dir, err := os.MkdirTemp("", "dnstap-bin")
		if err != nil {
			dnstapBinary.err = err
			return
		}
		dnstapBinary.path = filepath.Join(dir, "dnstap")
		out, err := gotool.Command("build", "-o", dnstapBinary.path, "github.com/dnstap/golang-dnstap/dnstap").CombinedOutput()
		if err != nil {
			dnstapBinary.err = fmt.Errorf("go build dnstap: %v\n%s", err, out)
		}
	})
	if dnstapBinary.err != nil {
		t.Fatal(dnstapBinary.err)
	}
	return dnstapBinary.path
}

// removeBuilt removes what the tests built, when they end.
func removeBuilt(int) {
	if dnstapBinary.path != "" {
		os.RemoveAll(filepath.Dir(dnstapBinary.path))
	}
}

// tapReader is a running dnstap command reading a Unix or TCP socket
// and writing each message it decodes as a JSON line.
type tapReader struct {
	cmd *exec.Cmd
	out string // its JSON lines
}

// shortDir is a temporary directory with a path short enough for a Unix
// socket (108 bytes), removed when the test ends.
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "tap")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// startTapReader starts the dnstap command listening on sock, its output
// in out, and returns once the socket is there; it is killed when the
// test ends.
func startTapReader(t *testing.T, sock, out string) *tapReader {
	t.Helper()
	os.Remove(sock)
	r := &tapReader{cmd: exec.Command(buildDnstap(t), "-u", sock, "-j", "-w", out), out: out}
	r.start(t)
	polltest.Eventually(t, "the dnstap reader's socket", func() error {
		_, err := os.Stat(sock)
		return err
	})
	return r
}

// start starts the reader's command, killed when the test ends.
func (r *tapReader) start(t *testing.T) {
	t.Helper()
	r.cmd.Stdout, r.cmd.Stderr = t.Output(), t.Output()
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.kill)
}

// kill ends the reader, if it still runs, and waits for it.
func (r *tapReader) kill() {
	if r.cmd.ProcessState == nil {
		r.cmd.Process.Kill()
		r.cmd.Wait()
	}
}

// tapMessage is the part of a decoded message the tests read.
type tapMessage struct {
	Type           string `json:"type"`            // CLIENT_QUERY, ...
	SocketProtocol string `json:"socket_protocol"` // UDP, TCP, DOT, ...
}

// types counts the messages the reader decoded, by dnstap message type
// (CLIENT_QUERY, ...).
func (r *tapReader) types() (map[string]int, error) {
	return r.count(func(m tapMessage) string { return m.Type })
}

// count counts the messages the reader decoded, by key.
func (r *tapReader) count(key func(tapMessage) string) (map[string]int, error) {
	data, err := os.ReadFile(r.out)
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Message tapMessage `json:"message"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			break // a line being written
		}
		counts[key(line.Message)]++
	}
	return counts, nil
}
