package source

import "testing"

func TestALastReportChangesOnlyWhenItsTextDoes(t *testing.T) {
	var r lastReport
	for i, step := range []struct {
		report string
		want   bool
	}{
		{"", false}, {"uid-1\nbad", true}, {"uid-1\nbad", false}, {"", true}, {"uid-1\nbad", true},
	} {
		if got := r.changed(step.report); got != step.want {
			t.Errorf("step %d, %q: changed %v, want %v", i, step.report, got, step.want)
		}
	}
}
