package soakcheck

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// publishedMsg is the message of the debug line skydns logs for every
// update it applies (skydns/mirror.go).
const publishedMsg = "snapshot published"

// ParseAppliedLog reads the updates a skydns applied from its log, written
// with --log-level=debug --log-format=json: one run of the process per
// element, a new run beginning at every line that starts with runHeader.
// Lines of other messages, and lines that are not JSON (a crash's trace),
// are skipped; a "snapshot published" line without a revision is an error.
func ParseAppliedLog(data []byte, runHeader string) ([][]Applied, error) {
	var runs [][]Applied
	for line := range bytes.Lines(data) {
		if bytes.HasPrefix(line, []byte(runHeader)) {
			runs = append(runs, nil)
			continue
		}
		var entry struct {
			Msg      string `json:"msg"`
			Revision *int64 `json:"revision"`
			Full     bool   `json:"full"`
		}
		if json.Unmarshal(line, &entry) != nil || entry.Msg != publishedMsg {
			continue
		}
		if entry.Revision == nil {
			return nil, fmt.Errorf("%q line without a revision: %s", publishedMsg, bytes.TrimSpace(line))
		}
		if len(runs) == 0 {
			runs = append(runs, nil)
		}
		runs[len(runs)-1] = append(runs[len(runs)-1], Applied{Revision: *entry.Revision, Full: entry.Full})
	}
	return runs, nil
}
