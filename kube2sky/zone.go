package kube2sky

import "github.com/kubesky/kubesky/kube2sky/records"

// desiredZone returns the records of the zone itself.
func (c *Controller) desiredZone() []records.Entry {
	return []records.Entry{c.zone.DNSVersion()}
}
