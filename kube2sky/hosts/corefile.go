package hosts

import (
	"fmt"
	"strings"

	"github.com/kubesky/kubesky/corefile"
)

// CorefileKey is the data key of CoreDNS's ConfigMap (kube-system/coredns):
// its value is read as a Corefile, not as hosts-file text.
const CorefileKey = "Corefile"

// FromCorefile returns the inline entries of a Corefile's hosts plugins as
// hosts-file text, read as kubesky reads the whole Corefile: one that does
// not parse, or that kubesky refuses anywhere, gives a Problem instead, so
// that the caller keeps the entries of the last usable one (skydns keeps
// that Corefile's settings too). domain is kube2sky's --hosts-domain: the
// Corefile's entries must be served under it. data is the ConfigMap's
// keys, where a hosts plugin's file is read.
func FromCorefile(text, domain string, data map[string]string) (string, *Problem) {
	refused := func(reason string) (string, *Problem) {
		return "", &Problem{Key: CorefileKey, Reason: reason + "; the entries of the last usable Corefile stay"}
	}
	opts := corefile.DefaultOptions()
	opts.ReadKey = corefile.KeysOf(data)
	plan, err := corefile.ReadUsable(CorefileKey, []byte(text), opts)
	if err != nil {
		return refused(err.Error())
	}
	if plan.Hosts == "" {
		return "", nil
	}
	want := ""
	for _, s := range plan.Settings {
		if s.Daemon == "kube2sky" && s.Flag == "hosts-domain" {
			want = s.Value
		}
	}
	if strings.TrimSuffix(want, ".") != strings.TrimSuffix(domain, ".") {
		return refused(fmt.Sprintf("its hosts entries are names under %s, and kube2sky's --hosts-domain is %q", want, domain))
	}
	return plan.Hosts, nil
}
