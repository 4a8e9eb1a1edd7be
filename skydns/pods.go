package skydns

import (
	"fmt"

	"github.com/kubesky/kubesky/contract"
	"github.com/kubesky/kubesky/skydns/resolver"
)

// checkPodRecords accepts the --pod-records modes.
func checkPodRecords(mode string) error {
	if _, err := resolver.ParsePodMode(mode); err != nil || mode == "" {
		return fmt.Errorf("--pod-records: %q must be disabled, insecure or verified", mode)
	}
	return nil
}

// checkPodNamespaces accepts namespace names.
func checkPodNamespaces(namespaces []string) error {
	for _, ns := range namespaces {
		if !contract.ValidLabel(ns) {
			return fmt.Errorf("--pod-namespaces: %q is not a namespace name", ns)
		}
	}
	return nil
}

// checkAutopath accepts --autopath only with verified pod records: they
// are how skydns knows the namespace of the pod asking.
func checkAutopath(autopath bool, podRecords string) error {
	if autopath && podRecords != string(resolver.PodsVerified) {
		return fmt.Errorf("--autopath: needs --pod-records=verified (the pod records tell which namespace a client is in), not %q", podRecords)
	}
	return nil
}
