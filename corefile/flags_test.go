package corefile_test

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"

	"github.com/kubesky/kubesky/corefile"
	"github.com/kubesky/kubesky/kube2sky"
	"github.com/kubesky/kubesky/skydns"
)

// The flags a usable Corefile translates into exist, and skydns and
// kube2sky accept their values.
func TestTheDaemonsAcceptTheTranslatedFlags(t *testing.T) {
	files, err := filepath.Glob("testdata/*.Corefile")
	if err != nil || len(files) < 4 {
		t.Fatalf("testdata Corefiles: %v, %v", files, err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			text, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := corefile.Read(file, text, corefile.DefaultOptions())
			if err != nil || plan.Err() != nil {
				t.Fatal(err, plan.Err())
			}
			sky := skydns.DefaultConfig()
			sky.Forward.Upstreams = []string{"192.0.2.53"} // not this machine's resolv.conf
			if !parses(t, sky.AddFlags, arguments(plan, "skydns")) {
				return
			}
			if err := sky.Validate(); err != nil {
				t.Errorf("skydns %q: %v", plan.Flags("skydns"), err)
			}
			k2s := kube2sky.DefaultConfig()
			if parses(t, k2s.AddFlags, arguments(plan, "kube2sky")) {
				if err := k2s.Validate(); err != nil {
					t.Errorf("kube2sky %q: %v", plan.Flags("kube2sky"), err)
				}
			}
		})
	}
}

// arguments are the daemon's settings as a process receives them: Flags
// quotes them for a shell.
func arguments(plan *corefile.Plan, daemon string) []string {
	var out []string
	for _, s := range plan.Settings {
		if s.Daemon == daemon {
			out = append(out, "--"+s.Flag+"="+s.Value)
		}
	}
	return out
}

func parses(t *testing.T, addFlags func(*pflag.FlagSet), args []string) bool {
	t.Helper()
	fs := pflag.NewFlagSet("daemon", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Errorf("%q: %v", args, err)
		return false
	}
	return true
}
