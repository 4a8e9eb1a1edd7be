package main

import (
	"context"
	"fmt"
	"net/netip"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/kube2sky/records"
)

// dataset is the records of the simulated cluster, built by kube2sky's
// own record builder, and what the writer knows of etcd: each key's mod
// revision, as kube2sky reads it before a Txn.
type dataset struct {
	zone      records.Zone
	services  []records.Service
	endpoints [][]string              // per headless service, its endpoint IPs
	modRev    map[string]int64        // key → mod revision in etcd
	built     map[int][]records.Entry // per service, the records last written
	fence     fence
	nextIP    uint32 // the next endpoint address handed out by churn
	steps     int
}

// fence is the leader key every kube2sky Txn is conditioned on.
type fence struct {
	key string
	rev int64
}

const (
	fenceKey  = "/kubesky/leader/fanout-bench"
	zonePref  = "/skydns"
	portName  = "http"
	txnBatch  = 100 // keys per Txn while loading (etcd's default limit is 128 ops)
	headlessN = 10  // every tenth Service is headless
)

// newDataset builds services Services, every headlessN-th headless with
// endpointsPer endpoints, the rest with a cluster IP; every Service has one
// named port. The endpoints of ClusterIP Services give no records, as in
// kube2sky.
func newDataset(services, endpointsPer int) *dataset {
	d := &dataset{
		zone:   records.NewZone("cluster.local", zonePref, 30, "fanout-bench"),
		modRev: map[string]int64{}, built: map[int][]records.Entry{},
		nextIP: ipv4(10, 244, 0, 1),
	}
	for i := range services {
		svc := records.Service{Namespace: fmt.Sprintf("ns%d", i%100), Name: fmt.Sprintf("svc%d", i),
			Ports: []records.Port{{Name: portName, Protocol: "TCP", Port: 80}}}
		var ips []string
		if i%headlessN == 0 {
			svc.ClusterIPs = []string{records.ClusterIPNone}
			for range endpointsPer {
				ips = append(ips, d.newIP())
			}
		} else {
			svc.ClusterIPs = []string{ipString(ipv4(10, 96, 0, 0) + uint32(i) + 1)}
		}
		d.services = append(d.services, svc)
		d.endpoints = append(d.endpoints, ips)
	}
	return d
}

func (d *dataset) newIP() string {
	ip := ipString(d.nextIP)
	d.nextIP++
	return ip
}

// build returns the records of service i as it stands.
func (d *dataset) build(i int) []records.Entry {
	slice := records.EndpointSlice{Namespace: d.services[i].Namespace, Name: d.services[i].Name + "-x",
		Service: d.services[i].Name, AddressType: "IPv4", Ports: d.services[i].Ports}
	for _, ip := range d.endpoints[i] {
		slice.Endpoints = append(slice.Endpoints, records.Endpoint{Addresses: []string{ip}, Ready: true})
	}
	entries, _ := records.Build(d.zone, d.services[i], []records.EndpointSlice{slice})
	return entries
}

// load writes the leader key and every Service's records, txnBatch keys
// per Txn, and returns the number of keys written.
func (d *dataset) load(ctx context.Context, c *clientv3.Client) (int, error) {
	resp, err := c.Put(ctx, fenceKey, "fanout-bench")
	if err != nil {
		return 0, fmt.Errorf("writing the leader key: %w", err)
	}
	d.fence = fence{key: fenceKey, rev: resp.Header.Revision}
	var ops []clientv3.Op
	var keys []string
	flush := func() error {
		if len(ops) == 0 {
			return nil
		}
		resp, err := c.Txn(ctx).Then(ops...).Commit()
		if err != nil {
			return fmt.Errorf("loading records: %w", err)
		}
		for _, k := range keys {
			d.modRev[k] = resp.Header.Revision
		}
		ops, keys = ops[:0], keys[:0]
		return nil
	}
	for i := range d.services {
		d.built[i] = d.build(i)
		for _, e := range d.built[i] {
			ops, keys = append(ops, clientv3.OpPut(e.Key, string(e.Record.Encode()))), append(keys, e.Key)
			if len(ops) == txnBatch {
				if err := flush(); err != nil {
					return 0, err
				}
			}
		}
	}
	return len(d.modRev), flush()
}

// change is one churn Txn's conditions and operations, and the keys it
// puts and deletes.
type change struct {
	cmps       []clientv3.Cmp
	ops        []clientv3.Op
	puts, dels []string
}

// nextChange is the next change, in kube2sky's shape: one endpoint of a
// headless Service moves to a new address, and the Service's records are
// diffed into deletes and puts for one Txn conditioned on the leader key
// and on every touched key's mod revision.
func (d *dataset) nextChange() change {
	i := (d.steps * 7 % (len(d.services) / headlessN)) * headlessN
	d.steps++
	eps := d.endpoints[i]
	eps[d.steps%len(eps)] = d.newIP()
	next := d.build(i)
	ch := change{cmps: []clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(d.fence.key), "=", d.fence.rev)}}
	nextKeys := map[string]bool{}
	for _, e := range next {
		nextKeys[e.Key] = true
		if _, ok := d.modRev[e.Key]; !ok {
			ch.cmps = append(ch.cmps, clientv3.Compare(clientv3.ModRevision(e.Key), "=", 0))
			ch.ops, ch.puts = append(ch.ops, clientv3.OpPut(e.Key, string(e.Record.Encode()))), append(ch.puts, e.Key)
		}
	}
	for _, e := range d.built[i] {
		if !nextKeys[e.Key] {
			ch.cmps = append(ch.cmps, clientv3.Compare(clientv3.ModRevision(e.Key), "=", d.modRev[e.Key]))
			ch.ops, ch.dels = append(ch.ops, clientv3.OpDelete(e.Key)), append(ch.dels, e.Key)
		}
	}
	d.built[i] = next
	return ch
}

// committed records a change's commit at rev.
func (d *dataset) committed(ch change, rev int64) {
	for _, k := range ch.puts {
		d.modRev[k] = rev
	}
	for _, k := range ch.dels {
		delete(d.modRev, k)
	}
}

func ipv4(a, b, c, e byte) uint32 { return uint32(a)<<24 | uint32(b)<<16 | uint32(c)<<8 | uint32(e) }

func ipString(v uint32) string {
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}).String()
}
