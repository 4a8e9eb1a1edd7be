package soakcheck

import (
	"sort"
	"time"
)

// Phase is a stretch of the run named after the fault that began it; it
// lasts until the next phase begins.
type Phase struct {
	Name  string
	Begin time.Time
}

// BeforeFaults names the stretch before the first phase.
const BeforeFaults = "before any fault"

// MaxByPhase returns, for each phase holding at least one of the times at,
// the largest of the durations ds (ds[i] belongs to at[i]). phases must be
// in the order they began.
func MaxByPhase(phases []Phase, at []time.Time, ds []time.Duration) map[string]time.Duration {
	byPhase := map[string]time.Duration{}
	for i, t := range at {
		n := sort.Search(len(phases), func(j int) bool { return phases[j].Begin.After(t) })
		name := BeforeFaults
		if n > 0 {
			name = phases[n-1].Name
		}
		byPhase[name] = max(byPhase[name], ds[i])
	}
	return byPhase
}
