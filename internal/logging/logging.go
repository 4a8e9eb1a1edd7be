// Package logging holds what both daemons share about their logs: the
// --log-level values and the text logger built from one.
package logging

import (
	"fmt"
	"io"
	"log/slog"
)

// ParseLevel turns a --log-level value (debug, info, warn or error) into a
// slog level.
func ParseLevel(level string) (slog.Level, error) {
	switch level {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("%q is not one of debug, info, warn, error", level)
}

// New returns a text logger writing to w at level.
func New(w io.Writer, level string) (*slog.Logger, error) {
	l, err := ParseLevel(level)
	if err != nil {
		return nil, err
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}
