package soakcheck

import (
	"fmt"
	"sort"
	"time"
)

// Version is one value of a name that the API server acknowledged: from
// Acked on, the name should answer Value (a canonical answer, such as a
// sorted address list or "NXDOMAIN").
type Version struct {
	Acked time.Time
	Value string
}

// Answer is one answer a skydns served for a name, to a query sent at
// Sent.
type Answer struct {
	Server string
	Name   string
	Sent   time.Time
	Value  string
}

// Timeline holds every name's versions, each name's in the order of their
// acknowledgements.
type Timeline map[string][]Version

// Add appends a version of name; versions of one name must be added in
// the order they were acknowledged.
func (tl Timeline) Add(name string, v Version) { tl[name] = append(tl[name], v) }

// Superseded returns how long before a query sent at sent the value had
// stopped being name's current one: 0 when it was current then (or was
// acknowledged only later, its write still in flight), and ok false when
// no version of name ever had that value.
func (tl Timeline) Superseded(name, value string, sent time.Time) (age time.Duration, ok bool) {
	versions := tl[name]
	current := sort.Search(len(versions), func(i int) bool { return versions[i].Acked.After(sent) }) - 1
	for i := current; i >= 0; i-- {
		if versions[i].Value == value {
			if i == current {
				return 0, true
			}
			return sent.Sub(versions[i+1].Acked), true
		}
	}
	for _, v := range versions[current+1:] {
		if v.Value == value {
			return 0, true
		}
	}
	return 0, false
}

// StaleAnswers returns a description of every answer that was superseded
// more than bound before its query was sent, or that no version ever had,
// and the largest superseded age among all answers.
func StaleAnswers(tl Timeline, answers []Answer, bound time.Duration) (problems []string, maxAge time.Duration) {
	for _, a := range answers {
		age, ok := tl.Superseded(a.Name, a.Value, a.Sent)
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s answered %s with %q, which no acknowledged change made",
				a.Server, a.Name, a.Value))
		case age > bound:
			problems = append(problems, fmt.Sprintf("%s answered %s with %q at %s, superseded %v before (bound %v)",
				a.Server, a.Name, a.Value, a.Sent.Format(time.RFC3339Nano), age, bound))
		}
		maxAge = max(maxAge, age)
	}
	return problems, maxAge
}
