package kube2sky

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/kubesky/kubesky/internal/logging"
)

// parseLogLevel turns a --log-level value, in any letter case, into a slog
// level.
func parseLogLevel(s string) (slog.Level, error) {
	l, err := logging.ParseLevel(strings.ToLower(s))
	if err != nil {
		return 0, fmt.Errorf("--log-level: %w", err)
	}
	return l, nil
}

// NewLogger returns the logger c asks for (--log-level, --log-format),
// writing to w.
func (c Config) NewLogger(w io.Writer) *slog.Logger {
	return slog.New(logging.NewHandler(w, c.Level(), c.LogFormat))
}

// Level returns the configured log level (info when invalid).
func (c Config) Level() slog.Level {
	l, err := parseLogLevel(c.LogLevel)
	if err != nil {
		return slog.LevelInfo
	}
	return l
}
