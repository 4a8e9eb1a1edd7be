package gendata

import (
	"fmt"
	"hash/fnv"

	"github.com/kubesky/kubesky/contract"
)

// KV is one etcd key and its value.
type KV struct {
	Key, Value string
}

// Records returns the etcd keys and values of the services: an A record and
// a named-port SRV record each, two per service.
func Records(s Spec, svcs []Service) []KV {
	out := make([]KV, 0, 2*len(svcs))
	for _, svc := range svcs {
		out = append(out, aRecord(s, svc), srvRecord(s, svc))
	}
	return out
}

func aRecord(s Spec, svc Service) KV {
	value := string(contract.Record{Host: svc.IP.String()}.Encode())
	return KV{Key: contract.Key(s.Prefix, svc.FQDN(s.Zone)) + "/" + label(value), Value: value}
}

func srvRecord(s Spec, svc Service) KV {
	value := string(contract.Record{Host: svc.FQDN(s.Zone), Port: 80}.Encode())
	key := contract.Key(s.Prefix, "_http._tcp."+svc.FQDN(s.Zone)) + "/" + label(value)
	return KV{Key: key, Value: value}
}

// label is a short stable hash of a value, like the labels kube2sky writes.
func label(value string) string {
	h := fnv.New32a()
	h.Write([]byte(value))
	return fmt.Sprintf("%08x", h.Sum32())
}

// RawBytes is the total length of the keys and values.
func RawBytes(kvs []KV) int {
	n := 0
	for _, kv := range kvs {
		n += len(kv.Key) + len(kv.Value)
	}
	return n
}
