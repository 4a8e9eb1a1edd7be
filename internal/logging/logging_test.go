package logging

import (
	"encoding/json"
	"strings"
	"testing"

	"go.uber.org/zap"
)

func TestNewRejectsAnUnknownFormatOrLevel(t *testing.T) {
	if _, err := New(&strings.Builder{}, "info", "yaml"); err == nil || !strings.Contains(err.Error(), "text, json") {
		t.Errorf("format yaml: error %v, want one listing text, json", err)
	}
	if _, err := New(&strings.Builder{}, "loud", "text"); err == nil {
		t.Error("level loud accepted")
	}
}

func TestZapLinesGoToTheHandlerInItsFormat(t *testing.T) {
	var out strings.Builder
	logger, err := New(&out, "info", FormatJSON)
	if err != nil {
		t.Fatal(err)
	}
	z := Zap(logger.Handler()).Named("etcd").With(zap.String("member", "m1"))
	z.Debug("hidden by the level")
	z.Warn("slow fsync", zap.Int("ms", 120))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("logged %q, want one line", out.String())
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
		t.Fatalf("not JSON: %q", lines[0])
	}
	want := map[string]any{"level": "WARN", "msg": "slow fsync", "logger": "etcd", "member": "m1", "ms": float64(120)}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (line %s)", k, got[k], v, lines[0])
		}
	}
}
