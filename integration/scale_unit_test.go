package integration

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// env is a fake environment for parseScaleConfig.
func env(vars map[string]string) func(string) string {
	return func(name string) string { return vars[name] }
}

// The defaults: 10,000 Services and a minute of churn at 100 Service and
// 20 pod changes a second, which reuses 4,500 of the preloaded Services.
func TestScaleConfigDefaultsAreTenThousandServicesAndAMinuteOfChurn(t *testing.T) {
	c, err := parseScaleConfig(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := scaleConfig{Services: 10000, ChurnRate: 100, PodChurnRate: 20, ChurnDuration: time.Minute, Resync: 5 * time.Second, Out: defaultScaleOut}
	if c != want {
		t.Fatalf("defaults %+v, want %+v", c, want)
	}
	if c.ChurnChanges() != 6000 || c.preloadedTaken() != 4500 {
		t.Fatalf("%d changes taking %d preloaded Services, want 6000 and 4500", c.ChurnChanges(), c.preloadedTaken())
	}
}

func TestScaleConfigReadsTheEnvironment(t *testing.T) {
	c, err := parseScaleConfig(env(map[string]string{
		envScaleServices: "2000", envScalePods: "20000", envScaleChurnRate: "50", envScalePodChurnRate: "30", envScaleChurnDuration: "10s", envScaleResync: "3s",
		envScaleOut: "-", envScaleProfile: "/tmp/heap.pprof",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := scaleConfig{Services: 2000, Pods: 20000, ChurnRate: 50, PodChurnRate: 30, ChurnDuration: 10 * time.Second, Resync: 3 * time.Second, Profile: "/tmp/heap.pprof"}
	if c != want {
		t.Fatalf("got %+v, want %+v", c, want)
	}
}

func TestScaleConfigRejectsBadValuesNamingTheVariable(t *testing.T) {
	for _, tc := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{envScaleServices: "ten"}, envScaleServices + `="ten": want a positive whole number`},
		{map[string]string{envScaleServices: "0"}, envScaleServices},
		{map[string]string{envScalePods: "-1"}, envScalePods},
		{map[string]string{envScaleChurnRate: "-5"}, envScaleChurnRate},
		{map[string]string{envScaleChurnDuration: "60"}, envScaleChurnDuration + `="60": want a positive duration`},
		{map[string]string{envScaleChurnDuration: "1ms"}, "makes no change"},
		{map[string]string{envScaleResync: "100ms"}, envScaleResync + "=100ms: want at least 1s"},
		{map[string]string{envScaleServices: "100"}, "the churn changes 4500 preloaded Services"},
		{map[string]string{envScalePodChurnRate: "0"}, envScalePodChurnRate},
		{map[string]string{envScalePods: "500"}, "the pod churn deletes 600 preloaded pods"},
	} {
		_, err := parseScaleConfig(env(tc.vars))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one containing %q", tc.vars, err, tc.want)
		}
	}
}

func TestSlogTimeReadsTheTimeAttribute(t *testing.T) {
	got, err := slogTime(`time=2026-11-21T23:59:01.123Z level=INFO msg="informers synced" services=10001`)
	if want := time.Date(2026, 11, 21, 23, 59, 1, 123e6, time.UTC); err != nil || !got.Equal(want) {
		t.Fatalf("slogTime = %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{`level=INFO msg="no time"`, `time=yesterday level=INFO`} {
		if _, err := slogTime(bad); err == nil {
			t.Errorf("slogTime(%q): want an error", bad)
		}
	}
}

func TestScaleAddressesAreDistinctAndApart(t *testing.T) {
	seen := map[string]bool{}
	for i := range 2000 {
		for k := range endpointsPerService {
			ip := scaleEndpointIP(i, k)
			if seen[ip] {
				t.Fatalf("endpoint %d of Service %d: %s used twice", k, i, ip)
			}
			seen[ip] = true
		}
	}
	if got := scaleEndpointIP(51, 1); got != "10.128.1.0" {
		t.Fatalf("endpoint 1 of Service 51 = %s, want 10.128.1.0", got)
	}
	if got := churnIP(6000); seen[got] || got != "10.64.23.112" {
		t.Fatalf("churnIP(6000) = %s", got)
	}
}

func TestHeadlessSliceBelongsToItsService(t *testing.T) {
	s := headlessSlice(7)
	if s.Labels["kubernetes.io/service-name"] != "h-00007" || len(s.Endpoints) != endpointsPerService {
		t.Fatalf("slice %s labels %v with %d endpoints", s.Name, s.Labels, len(s.Endpoints))
	}
	if e := s.Endpoints[4]; *e.Hostname != "ep-4" || e.Addresses[0] != scaleEndpointIP(7, 4) || !*e.Conditions.Ready {
		t.Fatalf("endpoint 4: %+v", e)
	}
}

func TestSRVPortsAreNeedsEveryAnswerOnThePort(t *testing.T) {
	srv := func(port uint16) dns.RR { return &dns.SRV{Hdr: dns.RR_Header{Rrtype: dns.TypeSRV}, Port: port} }
	for _, tc := range []struct {
		answer []dns.RR
		want   bool
	}{
		{nil, false},
		{[]dns.RR{srv(9000), srv(9000)}, true},
		{[]dns.RR{srv(9000), srv(8080)}, false},
	} {
		if got := srvPortsAre(&dns.Msg{Answer: tc.answer}, 9000); got != tc.want {
			t.Errorf("srvPortsAre(%v, 9000) = %v, want %v", tc.answer, got, tc.want)
		}
	}
}

func TestTableRendersMarkdownWithTargets(t *testing.T) {
	tb := &table{title: "T", header: []string{"measure", "value", "target", "ratio", "verdict"}}
	tb.add(row("sync", fmtDuration(2500*time.Millisecond), targetCells(2500*time.Millisecond, 10*time.Second))...)
	tb.add(row("p99", fmtDuration(60*time.Millisecond), targetCells(60*time.Millisecond, 50*time.Millisecond))...)
	tb.add(row("writes", fmtCount(1234567), zeroCells(1234567))...)
	want := "## T\n\n| measure | value | target | ratio | verdict |\n| --- | ---: | ---: | ---: | ---: |\n" +
		"| sync | 2.5 s | ≤ 10 s | 0.25× | met |\n| p99 | 60 ms | ≤ 50 ms | 1.20× | missed |\n| writes | 1,234,567 | 0 | — | missed |\n\n"
	if got := tb.String(); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestPercentilesOfNothingAreZero(t *testing.T) {
	if p := percentiles(nil, 50, 99); p[0] != 0 || p[1] != 0 {
		t.Fatalf("percentiles(nil) = %v", p)
	}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	if p := percentiles([]time.Duration{ms(3), ms(1), ms(2), ms(4)}, 50, 100); p[0] != ms(2) || p[1] != ms(4) {
		t.Fatalf("percentiles = %v, want 2ms 4ms", p)
	}
}

func TestHistogramQuantileFindsTheBucketOfTheChange(t *testing.T) {
	before := map[string]float64{
		`h_bucket{scope="service",le="0.005"}`: 10, `h_bucket{scope="service",le="0.02"}`: 10, `h_bucket{scope="service",le="+Inf"}`: 10,
	}
	after := map[string]float64{
		`h_bucket{scope="service",le="0.005"}`: 100, `h_bucket{scope="service",le="0.02"}`: 108, `h_bucket{scope="service",le="+Inf"}`: 110,
		`h_bucket{scope="full",le="0.005"}`: 0, `h_bucket{scope="full",le="0.02"}`: 0, `h_bucket{scope="full",le="+Inf"}`: 50,
	}
	for _, tc := range []struct {
		q    float64
		want float64
	}{{0.5, 0.005}, {0.9, 0.005}, {0.95, 0.02}, {0.99, math.Inf(1)}} {
		if got, ok := histogramQuantile(before, after, "h", `scope="service"`, tc.q); !ok || got != tc.want {
			t.Errorf("q%v = %v, %v; want %v", tc.q, got, ok, tc.want)
		}
	}
	if _, ok := histogramQuantile(after, after, "h", `scope="service"`, 0.5); ok {
		t.Error("no observations between the scrapes: want false")
	}
	if got := fmtDuration(-1500 * time.Microsecond); got != "−1.5 ms" {
		t.Errorf("fmtDuration(-1.5ms) = %q", got)
	}
	if got := fmtBucket(0.005, true); got != "≤ 5 ms" {
		t.Errorf("fmtBucket = %q", got)
	}
}

func TestCoreDNSModelIsTheGuidesFormulaLessCacheAndBuffer(t *testing.T) {
	const mb = 1 << 20
	// (150,000 + 10,000) / 1000 + 54 = 214 MB, less 30 MB of cache and 5 of buffer.
	if got, want := coreDNSModel(150000, 10000), int64(179*mb); got != want {
		t.Fatalf("coreDNSModel(150000, 10000) = %d, want %d", got, want)
	}
	if got, want := coreDNSModel(0, 0), int64(19*mb); got != want {
		t.Fatalf("coreDNSModel(0, 0) = %d, want %d", got, want)
	}
}

func TestBytesCellsJudgeAtOrBelowTheTarget(t *testing.T) {
	const mb = 1 << 20
	if got := bytesCells(100*mb, 200*mb, " (x)"); got[0] != "≤ 200.0 MB (x)" || got[1] != "0.50×" || got[2] != "met" {
		t.Errorf("below: %q", got)
	}
	if got := bytesCells(200*mb, 200*mb, ""); got[2] != "met" {
		t.Errorf("equal: %q", got)
	}
	if got := bytesCells(300*mb, 200*mb, ""); got[1] != "1.50×" || got[2] != "missed" {
		t.Errorf("above: %q", got)
	}
}

func TestPodChurnNamesAndAddresses(t *testing.T) {
	if got := podName("10.192.0.7"); got != "10-192-0-7.scale.pod.cluster.local." {
		t.Errorf("podName = %q", got)
	}
	if got := podChurnName(42); got != "q-000042" {
		t.Errorf("podChurnName(42) = %q", got)
	}
	// The started pods' addresses stay apart from the preloaded pods' (150,000
	// from 10.128.0.0) and the Services' endpoints and churn.
	if last := nthIPv4(scalePodBase, 149999); last >= "10.192" {
		t.Errorf("preloaded pods reach %s", last)
	}
	c, err := parseScaleConfig(env(map[string]string{envScalePods: "150000"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.PodChurnChanges() != 1200 || c.podsTaken() != 600 {
		t.Errorf("%d pod changes deleting %d pods, want 1200 and 600", c.PodChurnChanges(), c.podsTaken())
	}
}
