// Package logging holds what both daemons share about their logs: the
// --log-level and --log-format values and the logger built from them.
package logging

import (
	"fmt"
	"io"
	"log/slog"
)

// Formats are the --log-format values.
const (
	FormatText = "text"
	FormatJSON = "json"
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

// CheckFormat reports whether format is a --log-format value.
func CheckFormat(format string) error {
	if format != FormatText && format != FormatJSON {
		return fmt.Errorf("%q is not one of text, json", format)
	}
	return nil
}

// New returns a logger writing to w at level, one line per record: logfmt
// key=value pairs for format "text", a JSON object for "json".
func New(w io.Writer, level, format string) (*slog.Logger, error) {
	l, err := ParseLevel(level)
	if err != nil {
		return nil, err
	}
	if err := CheckFormat(format); err != nil {
		return nil, err
	}
	return slog.New(NewHandler(w, l, format)), nil
}

// NewHandler is New's handler for a level and format already checked
// (any format other than "json" is text).
func NewHandler(w io.Writer, level slog.Leveler, format string) slog.Handler {
	opts := &slog.HandlerOptions{Level: level}
	if format == FormatJSON {
		return slog.NewJSONHandler(w, opts)
	}
	return slog.NewTextHandler(w, opts)
}
