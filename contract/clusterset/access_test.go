package clusterset

import "testing"

func (r KeyRange) has(key string) bool {
	if r.End == "" {
		return key == r.Key
	}
	return key >= r.Key && key < r.End
}

func TestAClusterWritesItsOwnKeysAndNoOtherClusters(t *testing.T) {
	writes := ClusterWriteRanges("/clusterset/", "east")
	mayWrite := func(key string) bool {
		for _, r := range writes {
			if r.has(key) {
				return true
			}
		}
		return false
	}
	own := []string{ClusterKey("/clusterset", "east"), ExportKey("/clusterset", ExportID{"east", ServiceName{"shop", "db"}}),
		ImportKey("/clusterset", ExportID{"east", ServiceName{"shop", "db"}})}
	others := []string{ClusterKey("/clusterset", "west"), ClusterKey("/clusterset", "east2"), ClusterKey("/clusterset", "east") + "/x",
		ExportKey("/clusterset", ExportID{"west", ServiceName{"shop", "db"}}), "/clusterset/exports/east2/shop/db", "/clusterset/exports/eas",
		ImportKey("/clusterset", ExportID{"east-1", ServiceName{"shop", "db"}}), "/clusterset/", "/clusterset0", "/skydns/east"}
	for _, k := range own {
		if !mayWrite(k) {
			t.Errorf("east may not write its own %s", k)
		}
		if !ReadRange("/clusterset").has(k) {
			t.Errorf("%s is outside the read range %+v", k, ReadRange("/clusterset"))
		}
	}
	for _, k := range others {
		if mayWrite(k) {
			t.Errorf("east may write %s", k)
		}
	}
	if r := ReadRange("/clusterset"); r.has("/clusterset0") || r.has("/clusterset") || r.has("/clustersetx/a") {
		t.Errorf("the read range %+v reaches outside /clusterset/", r)
	}
}

func TestPrefixEndIsTheFirstKeyAfterThePrefix(t *testing.T) {
	for p, want := range map[string]string{"/a/": "/a0", "a": "b", "a\xff": "b", "\xff\xff": "\x00"} {
		if got := prefixEnd(p); got != want {
			t.Errorf("prefixEnd(%q) = %q, want %q", p, got, want)
		}
	}
}
