package integration

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// A test's name says what it checks, not which ticket asked for it: an
// issue's number or wording means nothing to a reader of `go test -v`.
func TestTestNamesSayWhatTheyCheck(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("listing the tests: %v (%d files)", err, len(files))
	}
	named := regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz)\w*Issue\w*)\(`)
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range named.FindAllSubmatch(src, -1) {
			t.Errorf("%s: %s names an issue; name it after what it tests", f, m[1])
		}
	}
}
