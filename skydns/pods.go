package skydns

import (
	"fmt"

	"github.com/kubesky/kubesky/skydns/resolver"
)

// checkPodRecords accepts the --pod-records modes.
func checkPodRecords(mode string) error {
	if _, err := resolver.ParsePodMode(mode); err != nil || mode == "" {
		return fmt.Errorf("--pod-records: %q must be disabled, insecure or verified", mode)
	}
	return nil
}
