package explain

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// Replica is one skydns: where it answers DNS, and its HTTP address for
// the applied revision ("" when unknown).
type Replica struct {
	DNS  string
	HTTP string
}

// ParseReplica reads "DNSADDR[,http=HTTPADDR]": 127.0.0.1:1053 or
// 10.244.1.5:53,http=10.244.1.5:8081. A DNS address without a port is on
// port 53.
func ParseReplica(s string) (Replica, error) {
	dnsAddr, rest, hasHTTP := strings.Cut(s, ",")
	r := Replica{DNS: dnsAddr}
	if _, _, err := net.SplitHostPort(dnsAddr); err != nil {
		r.DNS = net.JoinHostPort(strings.Trim(dnsAddr, "[]"), "53")
	}
	if err := checkHostPort(r.DNS); err != nil {
		return Replica{}, fmt.Errorf("--dns %q: %w", s, err)
	}
	if hasHTTP {
		httpAddr, ok := strings.CutPrefix(rest, "http=")
		if err := checkHostPort(httpAddr); !ok || err != nil {
			return Replica{}, fmt.Errorf("--dns %q: after the comma want http=HOST:PORT", s)
		}
		r.HTTP = httpAddr
	}
	return r, nil
}

func checkHostPort(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if host == "" {
		return fmt.Errorf("no host")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q is not 1..65535", port)
	}
	return nil
}

// ReplicaState is what one replica answers now and the revision it has
// applied.
type ReplicaState struct {
	Replica
	// Rcode is the answer's rcode ("NOERROR"), "" when none came (AskErr).
	Rcode  string
	Answer []string
	AskErr error
	// Applied is the etcd revision of the snapshot the replica serves; 0
	// with RevErr when it could not be read.
	Applied int64
	RevErr  error
}

// asking is how replicas are asked.
type asking struct {
	timeout time.Duration
	// tcp asks over TCP only (through kubectl port-forward, which carries
	// no UDP).
	tcp bool
}

// observe asks r the query and reads its applied revision.
func observe(ctx context.Context, r Replica, q Query, how asking) ReplicaState {
	s := ReplicaState{Replica: r}
	s.Rcode, s.Answer, s.AskErr = ask(r.DNS, q, how)
	if r.HTTP == "" {
		s.RevErr = fmt.Errorf("no HTTP address given")
		return s
	}
	ctx, cancel := context.WithTimeout(ctx, how.timeout)
	defer cancel()
	s.Applied, s.RevErr = appliedRevision(ctx, r.HTTP)
	return s
}

// ask sends q to addr over UDP, again over TCP when the answer is
// truncated (over TCP only with how.tcp), and returns the rcode and the
// answer section, one record a line with single spaces.
func ask(addr string, q Query, how asking) (string, []string, error) {
	m := new(dns.Msg).SetQuestion(q.Name, q.Type)
	m.SetEdns0(1232, false)
	tcp := &dns.Client{Net: "tcp", Timeout: how.timeout}
	var resp *dns.Msg
	var err error
	if how.tcp {
		resp, _, err = tcp.Exchange(m, addr)
	} else if resp, _, err = (&dns.Client{Net: "udp", Timeout: how.timeout}).Exchange(m, addr); err == nil && resp.Truncated {
		resp, _, err = tcp.Exchange(m, addr)
	}
	if err != nil {
		return "", nil, err
	}
	var answer []string
	for _, rr := range resp.Answer {
		answer = append(answer, strings.Join(strings.Fields(rr.String()), " "))
	}
	return dns.RcodeToString[resp.Rcode], answer, nil
}

// revisionMetric is the gauge skydns publishes the applied revision in.
const revisionMetric = "skydns_snapshot_revision"

// appliedRevision reads skydns_snapshot_revision from addr's /metrics.
func appliedRevision(ctx context.Context, addr string) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), revisionMetric+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return int64(f), err
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no %s on its /metrics", revisionMetric)
}
