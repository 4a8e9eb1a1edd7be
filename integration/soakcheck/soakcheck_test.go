package soakcheck

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestCheckRun(t *testing.T) {
	history := NewHistory([]int64{12, 3, 5, 7, 9, 10, 12})
	list := func(r int64) Applied { return Applied{Revision: r, Full: true} }
	watch := func(r int64) Applied { return Applied{Revision: r} }
	cases := []struct {
		name    string
		applied []Applied
		want    []string // a substring of each problem, in order
	}{
		{"a list then every later revision is clean", []Applied{list(4), watch(5), watch(7), watch(9), watch(10)}, nil},
		{"a re-list that skips compacted revisions is clean", []Applied{list(4), watch(5), list(10), watch(12)}, nil},
		{"a re-list at the same revision is clean", []Applied{list(5), watch(7), list(7), watch(9)}, nil},
		{"a gap is reported", []Applied{list(4), watch(5), watch(9)}, []string{"gap: 1 revisions of the prefix skipped between 5 and 9 (first 7)"}},
		{"a duplicate is reported", []Applied{list(4), watch(5), watch(5), watch(7)}, []string{"revision 5 applied twice"}},
		{"an event a re-list held is reported", []Applied{list(4), watch(5), list(9), watch(7)}, []string{"revision 7 watched after a re-list at 9"}},
		{"an event out of order is reported", []Applied{list(4), watch(7), watch(5)}, []string{"gap: 1 revisions of the prefix skipped between 4 and 7", "revision 5 applied after 7: out of order"}},
		{"a revision etcd never had is reported", []Applied{list(4), watch(5), watch(6)}, []string{"no such revision"}},
		{"a re-list that goes back is reported", []Applied{list(9), list(5)}, []string{"re-list at revision 5 went back behind 9"}},
		{"a watch before any list is reported", []Applied{watch(5)}, []string{"before any list"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := CheckRun(c.applied, history)
			if len(got) != len(c.want) {
				t.Fatalf("CheckRun = %q, want %d problems like %q", got, len(c.want), c.want)
			}
			for i := range got {
				if !strings.Contains(got[i], c.want[i]) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], c.want[i])
				}
			}
		})
	}
}

func TestHistory(t *testing.T) {
	h := NewHistory([]int64{9, 3, 3, 5})
	if h.Len() != 3 || h.Last() != 9 {
		t.Errorf("Len %d Last %d, want 3 and 9", h.Len(), h.Last())
	}
	if got := h.between(3, 9); !slices.Equal(got, []int64{5}) {
		t.Errorf("between(3, 9) = %v, want [5]", got)
	}
	if got := NewHistory(nil).Last(); got != 0 {
		t.Errorf("empty Last = %d", got)
	}
}

func TestStaleAnswers(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	tl := Timeline{}
	tl.Add("a", Version{Started: at(0), Acked: at(0), Value: "NXDOMAIN"})
	tl.Add("a", Version{Started: at(9), Acked: at(10), Value: "10.0.0.1"})
	tl.Add("a", Version{Started: at(19), Acked: at(20), Value: "10.0.0.2"})
	tl.Add("a", Version{Started: at(25), Acked: at(30), Value: "NXDOMAIN"}) // a delete whose first answer was lost
	const bound = 5 * time.Second
	answer := func(server string, sent float64, value string) Answer {
		return Answer{Server: server, Name: "a", Sent: at(sent), Received: at(sent + 0.01), Value: value}
	}
	cases := []struct {
		name    string
		answer  Answer
		want    string // a substring of the one problem, or "" for none
		wantAge time.Duration
	}{
		{"the current value is fine", answer("", 15, "10.0.0.1"), "", 0},
		{"a value superseded within the bound is fine", answer("", 24, "10.0.0.1"), "", 4 * time.Second},
		{"a value whose write is in flight is fine", answer("", 19.5, "10.0.0.2"), "", 0},
		{"a value whose write started while the query was answered is fine", Answer{Name: "a", Sent: at(18.9), Received: at(19.1), Value: "10.0.0.2"}, "", 0},
		{"a value superseded beyond the bound is stale", answer("s1", 26, "10.0.0.1"), "superseded 6s before", 6 * time.Second},
		{"the latest of repeated values counts", answer("", 31, "NXDOMAIN"), "", 0},
		{"a delete applied before its acknowledgement is fine", answer("", 27, "NXDOMAIN"), "", 0},
		{"an old NXDOMAIN before the delete's write is stale", answer("", 24.5, "NXDOMAIN"), "superseded 14.5s before", 14500 * time.Millisecond},
		{"a value served before its write started is reported", answer("", 18, "10.0.0.2"), "no change had written by then", 0},
		{"a value never acknowledged is reported", answer("", 15, "10.9.9.9"), "no change had written by then", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			problems, age := StaleAnswers(tl, []Answer{c.answer}, bound)
			if age != c.wantAge {
				t.Errorf("age %v, want %v", age, c.wantAge)
			}
			switch {
			case c.want == "" && len(problems) != 0:
				t.Errorf("problems %q, want none", problems)
			case c.want != "" && (len(problems) != 1 || !strings.Contains(problems[0], c.want)):
				t.Errorf("problems %q, want one containing %q", problems, c.want)
			}
		})
	}
}

func TestDiff(t *testing.T) {
	want := map[string]string{"/a": "1", "/b": "2", "/c": "3"}
	got := map[string]string{"/a": "1", "/b": "9", "/d": "4"}
	missing, stale := Diff(want, got)
	if !slices.Equal(missing, []string{"/b", "/c"}) || !slices.Equal(stale, []string{"/b", "/d"}) {
		t.Errorf("Diff = missing %v stale %v, want [/b /c] and [/b /d]", missing, stale)
	}
	if err := DiffError(want, want); err != nil {
		t.Errorf("DiffError of equal sets = %v", err)
	}
	if err := DiffError(want, got); err == nil || !strings.Contains(err.Error(), "2 missing [/b /c], 2 stale [/b /d]") {
		t.Errorf("DiffError = %v", err)
	}
}

func TestParseAppliedLog(t *testing.T) {
	log := `=== harness: starting skydns
{"time":"t","level":"INFO","msg":"listening"}
{"time":"t","level":"DEBUG","msg":"snapshot published","revision":4,"records":3,"events":3,"full":true}
{"time":"t","level":"DEBUG","msg":"snapshot published","revision":5,"records":3,"events":1,"full":false}
goroutine 1 [running]:
=== harness: starting skydns
{"time":"t","level":"DEBUG","msg":"snapshot published","revision":9,"records":3,"events":3,"full":true}
`
	runs, err := ParseAppliedLog([]byte(log), "=== harness: starting ")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]Applied{{{4, true}, {5, false}}, {{9, true}}}
	if len(runs) != 2 || !slices.Equal(runs[0], want[0]) || !slices.Equal(runs[1], want[1]) {
		t.Errorf("runs %v, want %v", runs, want)
	}
	_, err = ParseAppliedLog([]byte(`{"msg":"snapshot published","full":true}`+"\n"), "===")
	if err == nil || !strings.Contains(err.Error(), "without a revision") {
		t.Errorf("a line without a revision: err %v", err)
	}
}

func TestMaxByPhase(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	phases := []Phase{{"kill", t0.Add(10 * time.Second)}, {"pause", t0.Add(20 * time.Second)}, {"kill", t0.Add(30 * time.Second)}}
	at := []time.Time{t0, t0.Add(12 * time.Second), t0.Add(25 * time.Second), t0.Add(31 * time.Second), t0.Add(21 * time.Second)}
	ds := []time.Duration{1, 2, 3, 7, 5}
	got := MaxByPhase(phases, at, ds)
	want := map[string]time.Duration{BeforeFaults: 1, "kill": 7, "pause": 5}
	if len(got) != len(want) {
		t.Fatalf("MaxByPhase = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %v, want %v", k, got[k], v)
		}
	}
}
