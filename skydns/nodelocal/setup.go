//go:build linux

package nodelocal

import (
	"errors"
	"fmt"
	"log/slog"
)

// Setup makes sure the interface exists and is up, holds the address,
// and (with Notrack) that the notrack table is in place. Running it again
// changes nothing that is already right.
func Setup(cfg Config) error {
	if cfg.Interface == "" || !cfg.Addr.IsValid() {
		return errors.New("nodelocal: want an interface and an address")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	link, err := ensureLink(cfg.Interface, cfg.Logger)
	if err != nil {
		return err
	}
	if err := ensureAddr(link, cfg.Addr.Addr()); err != nil {
		return err
	}
	if !cfg.Notrack {
		return nil
	}
	if err := applyRuleset(NotrackRuleset(cfg.Addr)); err != nil {
		return fmt.Errorf("notrack rules for %s: %w", cfg.Addr, err)
	}
	return nil
}
