package skydns

import (
	"io"
	"log/slog"

	"github.com/kubesky/kubesky/internal/logging"
)

// NewQueryLogger returns the logger of the query lines: w in format, at
// level INFO whatever --log-level says, as CoreDNS's log plugin writes
// whatever its errors go to.
func NewQueryLogger(w io.Writer, format string) *slog.Logger {
	return slog.New(logging.NewHandler(w, slog.LevelInfo, format))
}

// NewLogger returns a logger writing to w at level (debug, info, warn or
// error) in format (text or json).
func NewLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	return logging.New(w, level, format)
}
