package harness

import "testing"

func TestParseMetrics(t *testing.T) {
	text := `# HELP kube2sky_leader 1 while leading.
# TYPE kube2sky_leader gauge
kube2sky_leader 1
skydns_dns_responses_total{plugin="skydns",rcode="NOERROR",zone="cluster.local."} 12
skydns_dns_responses_total{plugin="skydns",rcode="NXDOMAIN",zone="cluster.local."} 3
odd_label{v="a b} c"} 2.5 1700000000000
`
	m, err := ParseMetrics(text)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("a series without labels is keyed by its name", func(t *testing.T) {
		if m["kube2sky_leader"] != 1 {
			t.Errorf("kube2sky_leader = %v", m["kube2sky_leader"])
		}
	})
	t.Run("a series with labels is keyed as exposed", func(t *testing.T) {
		if got := m[`skydns_dns_responses_total{plugin="skydns",rcode="NXDOMAIN",zone="cluster.local."}`]; got != 3 {
			t.Errorf("got %v", got)
		}
	})
	t.Run("label values may hold spaces and braces and a timestamp is ignored", func(t *testing.T) {
		if got := m[`odd_label{v="a b} c"}`]; got != 2.5 {
			t.Errorf("got %v in %v", got, m)
		}
	})
	t.Run("Sum adds every series of a metric", func(t *testing.T) {
		if got := m.Sum("skydns_dns_responses_total"); got != 15 {
			t.Errorf("Sum = %v, want 15", got)
		}
	})
}

func TestParseMetricsRejectsALineWithoutValue(t *testing.T) {
	if _, err := ParseMetrics("kube2sky_leader\n"); err == nil {
		t.Fatal("want an error")
	}
	if _, err := ParseMetrics("kube2sky_leader one\n"); err == nil {
		t.Fatal("want an error for a value that is no number")
	}
}
