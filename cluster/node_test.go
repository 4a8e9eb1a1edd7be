package cluster

import (
	"strings"
	"testing"
)

func TestHolderScriptCoversTheHostPaths(t *testing.T) {
	script := holderScript(DefaultConfig("/repo").paths())
	for _, want := range []string{
		"mount -t tmpfs -o mode=755 tmpfs /run\n",
		"mount -t tmpfs -o mode=755 tmpfs /var/lib\n",
		"mount --bind /repo/.cache/cluster/run/mask/vm_overcommit_memory /proc/sys/vm/overcommit_memory\n",
		"mount --bind /repo/.cache/cluster/run/mask/kernel_panic_on_oops /proc/sys/kernel/panic_on_oops\n",
	} {
		if !strings.Contains(script, want) {
			t.Errorf("holder script lacks %q:\n%s", want, script)
		}
	}
	if !strings.HasSuffix(script, "exec sleep infinity\n") {
		t.Errorf("holder script does not end by sleeping:\n%s", script)
	}
}

func TestNodeConfigsUseTheDataDir(t *testing.T) {
	p := DefaultConfig("/repo").paths()
	for name, text := range map[string]string{
		"containerd": containerdConfig(p),
		"kubelet":    kubeletConfig(p),
		"cni":        cniConfig(p),
	} {
		if !strings.Contains(text, "/repo/.cache/cluster/run/") {
			t.Errorf("%s config does not point into the data dir:\n%s", name, text)
		}
	}
	if !strings.Contains(containerdConfig(p), "restrict_oom_score_adj = true") {
		t.Error("containerd may ask for a negative oom_score_adj, which this machine kind refuses")
	}
}
