package skydns

import (
	"io"
	"log/slog"

	"github.com/kubesky/kubesky/internal/logging"
)

// NewLogger returns a text logger writing to w at level (debug, info, warn
// or error).
func NewLogger(w io.Writer, level string) (*slog.Logger, error) {
	return logging.New(w, level)
}
