package integration

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/etcdstore"
	"github.com/kubesky/kubesky/integration/harness"
	"github.com/kubesky/kubesky/internal/dnstest"
)

// TestDemo runs `kubesky-demo run` as `make demo` does, on free ports:
// it must come up, show the example records, serve a Service created
// afterwards and a record added by hand, and on SIGTERM stop every server
// it started and exit 0.
func TestDemo(t *testing.T) {
	harness.RequireBinaries(t, "kubesky-demo", "skydns", "kube2sky", "etcd", "kube-apiserver")
	dataDir := t.TempDir()
	ports := demoPorts(t)
	demo := harness.StartProcess(t, harness.ProcessSpec{
		Name:        "kubesky-demo",
		Path:        harness.Binary("kubesky-demo"),
		Args:        append([]string{"run", "--data-dir", dataDir}, ports.args()...),
		StopTimeout: time.Minute,
	})
	demo.WaitForLog("Everything is up", 3*time.Minute)

	t.Run("it printed the records and the answers of every kind", func(t *testing.T) {
		log := readLog(t, demo)
		for _, want := range []string{
			"/skydns/local/cluster/svc/default/web/_tcp/_https/",
			"web.default.svc.cluster.local.\t30\tIN\tA\t10.96.0.80",
			"IN\tSRV\t10 50 5432 db-1.db.default.svc.cluster.local.",
			"80.0.96.10.in-addr.arpa.\t30\tIN\tPTR\tweb.default.svc.cluster.local.",
			"docs.default.svc.cluster.local.\t30\tIN\tCNAME\tkubernetes.io.",
		} {
			if !strings.Contains(log, want) {
				t.Errorf("the demo's output lacks %q", want)
			}
		}
	})
	t.Run("a Service applied with the demo's apply command is served", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "api.yaml")
		os.WriteFile(file, []byte("apiVersion: v1\nkind: Service\nmetadata:\n  name: api\nspec:\n  ports: [{name: http, port: 8080}]\n"), 0o600)
		out, err := exec.Command(harness.Binary("kubesky-demo"), "apply", "--kubeconfig",
			filepath.Join(dataDir, "pki", "kubeconfig"), "-f", file).CombinedOutput()
		if err != nil {
			t.Fatalf("apply: %v\n%s", err, out)
		}
		waitForAnswer(t, ports.dns, "api.default.svc.cluster.local.", dns.TypeA)
	})
	t.Run("a record put into etcd by hand is served", func(t *testing.T) {
		opts := etcdstore.DefaultClientOptions()
		opts.Endpoints = []string{"http://" + ports.skydnsEtcd}
		client, err := opts.New(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		if _, err := client.Put(t.Context(), "/skydns/local/cluster/svc/default/hand/x1", `{"host":"10.0.0.42"}`); err != nil {
			t.Fatal(err)
		}
		waitForAnswer(t, ports.dns, "hand.default.svc.cluster.local.", dns.TypeA)
	})
	t.Run("SIGTERM stops every server and the demo exits 0", func(t *testing.T) {
		demo.Stop()
		if _, err := demo.Exited(); err != nil {
			t.Fatalf("exit: %v", err)
		}
		log := readLog(t, demo)
		if !strings.Contains(log, "Stopped. The data is kept in "+dataDir) {
			t.Errorf("no data notice in the output")
		}
		for _, addr := range ports.all() {
			if err := listenOnce(addr); err != nil {
				t.Errorf("%s still taken after the demo stopped: %v", addr, err)
			}
		}
	})
}

// demoAddrs are free addresses for every server of the demo.
type demoAddrs struct {
	dns, skydnsHTTP, skydnsEtcd, apiEtcd, apiEtcdPeer, kube2sky string
	apiserverPort                                               int
}

func demoPorts(t *testing.T) demoAddrs {
	free := func() string { return harness.HostPort(harness.FreePort(t)) }
	return demoAddrs{
		dns: free(), skydnsHTTP: free(), skydnsEtcd: free(), apiEtcd: free(), apiEtcdPeer: free(),
		kube2sky: free(), apiserverPort: harness.FreePort(t),
	}
}

func (a demoAddrs) args() []string {
	return []string{
		"--dns-addr", a.dns, "--skydns-http-addr", a.skydnsHTTP, "--skydns-etcd-addr", a.skydnsEtcd,
		"--apiserver-etcd-addr", a.apiEtcd, "--apiserver-etcd-peer-addr", a.apiEtcdPeer,
		"--kube2sky-http-addr", a.kube2sky, "--apiserver-port", strconv.Itoa(a.apiserverPort),
	}
}

func (a demoAddrs) all() []string {
	return []string{a.dns, a.skydnsHTTP, a.skydnsEtcd, a.apiEtcd, a.apiEtcdPeer, a.kube2sky, harness.HostPort(a.apiserverPort)}
}

func listenOnce(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return l.Close()
}

func readLog(t *testing.T, p *harness.Process) string {
	t.Helper()
	data, err := os.ReadFile(p.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// waitForAnswer polls the DNS server until name has an answer of qtype.
func waitForAnswer(t *testing.T, addr, name string, qtype uint16) {
	t.Helper()
	harness.Eventually(t, 30*time.Second, func() error {
		resp, err := dnstest.Send("udp", addr, new(dns.Msg).SetQuestion(name, qtype))
		if err != nil {
			return err
		}
		if len(resp.Answer) == 0 {
			return fmt.Errorf("%s %s: %s, no answer", name, dns.TypeToString[qtype], dns.RcodeToString[resp.Rcode])
		}
		return nil
	})
}
