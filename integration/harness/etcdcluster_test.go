package harness

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestEtcdClusterPartitionAndHeal(t *testing.T) {
	c := StartEtcdCluster(t, 3)
	leaderNow := func() (*EtcdMember, error) {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel()
		return c.Leader(ctx)
	}
	var old *EtcdMember
	Eventually(t, 10*time.Second, func() (err error) { old, err = leaderNow(); return err })

	c.Partition(old)
	t.Run("the others elect another leader while the old one is cut off", func(t *testing.T) {
		Eventually(t, 20*time.Second, func() error {
			if checkEtcdHealth(etcdAccess{}.httpClient(), old.Endpoint) == nil {
				return errors.New("the partitioned member still reports healthy")
			}
			for _, m := range c.Members {
				if m == old {
					continue
				}
				if err := checkEtcdHealth(etcdAccess{}.httpClient(), m.Endpoint); err != nil {
					return err
				}
			}
			return nil
		})
	})

	c.Heal(old)
	t.Run("every member is healthy again after the heal", func(t *testing.T) {
		Eventually(t, 20*time.Second, c.Healthy)
		Eventually(t, 10*time.Second, func() error { _, err := leaderNow(); return err })
	})
}
