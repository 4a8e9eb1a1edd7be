package logging

import (
	"context"
	"log/slog"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Zap returns a zap logger whose entries go to h, so that a library
// logging through zap (the embedded etcd) writes lines in the daemon's
// format, at its level.
func Zap(h slog.Handler) *zap.Logger {
	return zap.New(&zapCore{handler: h})
}

// zapCore is a zapcore.Core writing to a slog.Handler.
type zapCore struct {
	handler slog.Handler
	fields  []zapcore.Field // from With
}

var _ zapcore.Core = (*zapCore)(nil)

// slogLevel maps zap's levels to slog's; DPanic and worse are errors.
func slogLevel(l zapcore.Level) slog.Level {
	switch {
	case l <= zapcore.DebugLevel:
		return slog.LevelDebug
	case l == zapcore.InfoLevel:
		return slog.LevelInfo
	case l == zapcore.WarnLevel:
		return slog.LevelWarn
	}
	return slog.LevelError
}

func (c *zapCore) Enabled(l zapcore.Level) bool {
	return c.handler.Enabled(context.Background(), slogLevel(l))
}

func (c *zapCore) With(fields []zapcore.Field) zapcore.Core {
	return &zapCore{handler: c.handler, fields: append(c.fields[:len(c.fields):len(c.fields)], fields...)}
}

func (c *zapCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

// Write turns the entry into one slog record: its message, its logger's
// name as "logger", and its fields.
func (c *zapCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range append(c.fields[:len(c.fields):len(c.fields)], fields...) {
		f.AddTo(enc)
	}
	r := slog.NewRecord(e.Time, slogLevel(e.Level), e.Message, 0)
	if e.LoggerName != "" {
		r.AddAttrs(slog.String("logger", e.LoggerName))
	}
	for k, v := range enc.Fields {
		r.AddAttrs(slog.Any(k, v))
	}
	return c.handler.Handle(context.Background(), r)
}

func (c *zapCore) Sync() error { return nil }
