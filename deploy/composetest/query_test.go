package composetest

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// queryInterval is the pause between two queries of a querier.
const queryInterval = 20 * time.Millisecond

// querier asks one DNS server the example questions in turn, until
// stopped, and keeps the outcome. A query counts as failed when two
// attempts (one second each) both fail, as a stub resolver retries once.
type querier struct {
	addr string
	done chan struct{}
	wg   sync.WaitGroup

	mu       sync.Mutex
	answered int
	failed   []string
}

func startQuerying(t *testing.T, addr string) *querier {
	q := &querier{addr: addr, done: make(chan struct{})}
	q.wg.Add(1)
	go q.loop()
	t.Cleanup(q.stop)
	return q
}

func (q *querier) loop() {
	defer q.wg.Done()
	for i := 0; ; i++ {
		select {
		case <-q.done:
			return
		case <-time.After(queryInterval):
		}
		q.ask(exampleAnswers[i%len(exampleAnswers)])
	}
}

func (q *querier) ask(e expectation) {
	err := check(q.addr, e)
	if err != nil {
		err = check(q.addr, e)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if err == nil {
		q.answered++
	} else {
		q.failed = append(q.failed, fmt.Sprintf("%s: %v", time.Now().Format("15:04:05.000"), err))
	}
}

// stop ends the querying and waits for the query in flight; it is safe to
// call twice.
func (q *querier) stop() {
	select {
	case <-q.done:
	default:
		close(q.done)
	}
	q.wg.Wait()
}

// results returns how many queries were answered and the failures.
func (q *querier) results() (int, []string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.answered, append([]string(nil), q.failed...)
}
