package skydns

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubesky/kubesky/etcdstore/etcdtest"
	"github.com/kubesky/kubesky/internal/dnstest"
	"github.com/kubesky/kubesky/internal/polltest"
)

// queryLine is the part of a JSON query line the tests compare.
type queryLine struct {
	Msg      string `json:"msg"`
	Client   string `json:"client"`
	Proto    string `json:"proto"`
	ID       int    `json:"id"`
	Name     string `json:"name"`
	Type     string `json:"type"`
	Rcode    string `json:"rcode"`
	Size     int    `json:"size"`
	Duration int64  `json:"duration"`
	Fast     bool   `json:"fast"`
}

// key is what a test expects of a line: the question, the answer's rcode,
// the transport and the path that answered.
func (q queryLine) key() string {
	return fmt.Sprintf("%s %s %s %s fast=%v", q.Name, q.Type, q.Rcode, q.Proto, q.Fast)
}

// startLoggingDaemon runs a daemon whose JSON log goes to the returned
// buffer, with one UDP socket, serving web.default.svc.cluster.local.
func startLoggingDaemon(t *testing.T, classes string, sample float64) (*Daemon, *logBuffer) {
	t.Helper()
	etcd := etcdtest.Start(t)
	put(t, etcd, "web.default.svc.cluster.local.", "a", `{"host":"10.0.0.1"}`)
	put(t, etcd, readyProbeName, "a", `{"host":"10.0.0.2"}`)
	cfg := testConfig(etcd.ClientURL())
	cfg.UDPSockets = 1
	cfg.LogFormat, cfg.LogQueries, cfg.LogQueriesSample = "json", classes, sample
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	d, err := Start(cfg, slog.New(slog.NewJSONHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopDaemon(t, d) })
	polltest.NoComplaint(t, "the records are served", func() string {
		return answerIs(dnstest.Ask(t, "tcp", d.DNSAddr(), readyProbeName, dns.TypeA), dns.RcodeSuccess, "10.0.0.2")
	})
	return d, logs
}

func stopDaemon(t *testing.T, d *Daemon) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.Stop(ctx); err != nil {
		t.Errorf("Stop: %v", err)
	}
}

// readyProbeName is the name startLoggingDaemon asks for until the daemon
// serves it. A line is written after its answer, so the probe's lines may
// come after a test's mark: queryLines leaves them out.
const readyProbeName = "ready.default.svc.cluster.local."

// queryLines returns the query lines logged after the first mark bytes
// of the log, but those of readyProbeName; every line must be JSON.
func queryLines(t *testing.T, logs *logBuffer, mark int) []queryLine {
	t.Helper()
	var out []queryLine
	for _, line := range strings.Split(strings.TrimSpace(logs.String()[mark:]), "\n") {
		if line == "" {
			continue
		}
		var q queryLine
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			t.Fatalf("log line is not JSON: %q: %v", line, err)
		}
		if q.Msg == "query" && q.Name != readyProbeName {
			out = append(out, q)
		}
	}
	return out
}

// formerrPacket is a query with QDCOUNT 1 and no question: FORMERR.
var formerrPacket, _ = hex.DecodeString("000900000001000000000000")

// askEveryClass sends one query of each class: a success and NODATA and
// NXDOMAIN over UDP (the fast path) and TCP, REFUSED for a name outside
// the zones, and a FORMERR.
func askEveryClass(t *testing.T, addr string) {
	t.Helper()
	for _, proto := range []string{"udp", "tcp"} {
		dnstest.Ask(t, proto, addr, "web.default.svc.cluster.local.", dns.TypeA)
		dnstest.Ask(t, proto, addr, "web.default.svc.cluster.local.", dns.TypeAAAA)
		dnstest.Ask(t, proto, addr, "nope.default.svc.cluster.local.", dns.TypeA)
	}
	dnstest.Ask(t, "udp", addr, "example.org.", dns.TypeA)
	conn, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	conn.Write(formerrPacket)
	if _, err := conn.Read(make([]byte, 512)); err != nil {
		t.Fatalf("no answer to the packet without a question: %v", err)
	}
}

var (
	successLines = []string{
		"web.default.svc.cluster.local. A NOERROR udp fast=true",
		"web.default.svc.cluster.local. A NOERROR tcp fast=true",
	}
	denialLines = []string{
		"web.default.svc.cluster.local. AAAA NOERROR udp fast=true",
		"web.default.svc.cluster.local. AAAA NOERROR tcp fast=true",
		"nope.default.svc.cluster.local. A NXDOMAIN udp fast=true",
		"nope.default.svc.cluster.local. A NXDOMAIN tcp fast=true",
	}
	errorLines = []string{
		"example.org. A REFUSED udp fast=false",
		" None FORMERR udp fast=false",
	}
)

func TestEachQueryLogClassLogsExactlyItsAnswers(t *testing.T) {
	tests := []struct {
		classes string
		want    []string
	}{
		{"none", nil},
		{"denial", denialLines},
		{"error", errorLines},
		{"denial,error", slices.Concat(denialLines, errorLines)},
		{"all", slices.Concat(successLines, denialLines, errorLines)},
	}
	for _, tc := range tests {
		t.Run("--log-queries="+tc.classes, func(t *testing.T) {
			d, logs := startLoggingDaemon(t, tc.classes, 1)
			mark := len(logs.String())
			askEveryClass(t, d.DNSAddr())
			stopDaemon(t, d) // every answer's line is written once the servers stopped
			lines := queryLines(t, logs, mark)
			var got []string
			for _, q := range lines {
				got = append(got, q.key())
			}
			if !slices.Equal(sorted(got), sorted(tc.want)) {
				t.Errorf("logged:\n %s\nwant:\n %s", strings.Join(sorted(got), "\n "), strings.Join(sorted(tc.want), "\n "))
			}
			for _, q := range lines {
				if host, _, err := net.SplitHostPort(q.Client); err != nil || host != "127.0.0.1" || q.Size < 12 || q.Duration <= 0 {
					t.Errorf("line %+v: want a 127.0.0.1:port client, a size and a duration", q)
				}
			}
		})
	}
}

func TestTheSampleRateLogsAFractionOfTheQueries(t *testing.T) {
	const queries, rate = 1000, 0.1
	d, logs := startLoggingDaemon(t, "all", rate)
	mark := len(logs.String())
	conn, err := net.Dial("udp", d.DNSAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	q := new(dns.Msg).SetQuestion("web.default.svc.cluster.local.", dns.TypeA)
	for i := range queries {
		q.Id = uint16(i)
		c := &dns.Conn{Conn: conn}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if err := c.WriteMsg(q); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ReadMsg(); err != nil {
			t.Fatal(err)
		}
	}
	stopDaemon(t, d)
	// Binomial(1000, 0.1): mean 100, standard deviation 9.5.
	if n := len(queryLines(t, logs, mark)); n < 50 || n > 160 {
		t.Errorf("%d of %d queries logged at --log-queries-sample=%v, want about %d", n, queries, rate, int(queries*rate))
	}
}

func TestQueryLinesGoToTheirOwnLoggerWhateverTheLevel(t *testing.T) {
	etcd := etcdtest.Start(t)
	cfg := testConfig(etcd.ClientURL())
	cfg.LogQueries, cfg.LogLevel = "denial", "warn"
	queries := &logBuffer{}
	cfg.QueryLog = slog.New(slog.NewJSONHandler(queries, nil))
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	daemonLog := &logBuffer{}
	d, err := Start(cfg, slog.New(slog.NewJSONHandler(daemonLog, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		t.Fatal(err)
	}
	polltest.NoComplaint(t, "NXDOMAIN once synced", func() string {
		return answerIs(dnstest.Ask(t, "tcp", d.DNSAddr(), "nope.cluster.local.", dns.TypeA), dns.RcodeNameError)
	})
	stopDaemon(t, d)
	lines := queryLines(t, queries, 0)
	if len(lines) == 0 {
		t.Error("no query line")
	}
	for _, q := range lines {
		if !strings.HasPrefix(q.key(), "nope.cluster.local. A NXDOMAIN tcp ") {
			t.Errorf("query line %+v, want only NXDOMAINs", q)
		}
	}
	if n := daemonLog.count(`"msg":"query"`); n != 0 {
		t.Errorf("%d query lines in the daemon's log, want them only in QueryLog", n)
	}
}
