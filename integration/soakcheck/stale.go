package soakcheck

import (
	"fmt"
	"time"
)

// Version is one value of a name that the API server acknowledged (a
// canonical answer, such as a sorted address list or "NXDOMAIN"). Its write
// was first sent at Started and acknowledged at Acked: an API server that
// restarts may apply a request whose answer is lost, so the value may
// take effect at any time in between. From Acked on, the name should
// answer Value.
type Version struct {
	Started time.Time
	Acked   time.Time
	Value   string
}

// Answer is one answer a skydns served for a name, to a query sent at
// Sent and answered at Received.
type Answer struct {
	Server   string
	Name     string
	Sent     time.Time
	Received time.Time
	Value    string
}

// Timeline holds every name's versions, each name's in the order of their
// acknowledgements.
type Timeline map[string][]Version

// Add appends a version of name; versions of one name must be added in
// the order they were acknowledged.
func (tl Timeline) Add(name string, v Version) { tl[name] = append(tl[name], v) }

// Superseded returns how long before a query sent at sent, and answered at
// received, the value had stopped being name's: 0 when it could be the
// name's value at some moment in between (from its write's start until
// the next version's acknowledgement), and ok false when no version of
// name had that value by received.
func (tl Timeline) Superseded(name, value string, sent, received time.Time) (age time.Duration, ok bool) {
	versions := tl[name]
	for i, v := range versions {
		if v.Value != value || v.Started.After(received) {
			continue
		}
		if i+1 == len(versions) || versions[i+1].Acked.After(sent) {
			return 0, true
		}
		gone := sent.Sub(versions[i+1].Acked)
		if !ok || gone < age {
			age = gone
		}
		ok = true
	}
	return age, ok
}

// StaleAnswers returns a description of every answer that was superseded
// more than bound before its query was sent, or that no version ever had,
// and the largest superseded age among all answers.
func StaleAnswers(tl Timeline, answers []Answer, bound time.Duration) (problems []string, maxAge time.Duration) {
	for _, a := range answers {
		age, ok := tl.Superseded(a.Name, a.Value, a.Sent, a.Received)
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s answered %s with %q, which no change had written by then",
				a.Server, a.Name, a.Value))
		case age > bound:
			problems = append(problems, fmt.Sprintf("%s answered %s with %q at %s, superseded %v before (bound %v)",
				a.Server, a.Name, a.Value, a.Sent.Format(time.RFC3339Nano), age, bound))
		}
		maxAge = max(maxAge, age)
	}
	return problems, maxAge
}
