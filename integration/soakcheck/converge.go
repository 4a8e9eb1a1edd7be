package soakcheck

import (
	"fmt"
	"slices"
)

// Diff compares the records wanted (key → value) with the records found:
// missing are the wanted keys absent or holding another value, stale the
// keys found that are not wanted or hold another value. Both are sorted.
func Diff(want, got map[string]string) (missing, stale []string) {
	for key, value := range want {
		if found, ok := got[key]; !ok || found != value {
			missing = append(missing, key)
		}
	}
	for key, value := range got {
		if wanted, ok := want[key]; !ok || wanted != value {
			stale = append(stale, key)
		}
	}
	slices.Sort(missing)
	slices.Sort(stale)
	return missing, stale
}

// DiffError returns nil when Diff finds nothing, else an error naming the
// counts and the first few keys of each kind.
func DiffError(want, got map[string]string) error {
	missing, stale := Diff(want, got)
	if len(missing) == 0 && len(stale) == 0 {
		return nil
	}
	return fmt.Errorf("%d missing %v, %d stale %v", len(missing), firstFew(missing), len(stale), firstFew(stale))
}

func firstFew(keys []string) []string {
	const few = 5
	return keys[:min(few, len(keys))]
}
