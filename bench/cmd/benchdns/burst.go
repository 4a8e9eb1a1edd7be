package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"net/netip"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubesky/kubesky/bench/gendata"
	"github.com/kubesky/kubesky/bench/report"
	"github.com/kubesky/kubesky/contract"
)

// burstEvents is the number of keys each burst writes.
const burstEvents = 10000

// bursts writes two bursts of new keys while skydns runs: one put per
// revision from 16 writers, then transactions of 100 puts from 4 writers;
// and times how long skydns takes to serve the last revision.
func (b *bench) bursts(ctx context.Context, inst *instance) []report.Burst {
	return []report.Burst{
		b.burst(ctx, inst, "single puts", 1, 16),
		b.burst(ctx, inst, "transactions of 100 puts", 100, 4),
	}
}

func (b *bench) burst(ctx context.Context, inst *instance, label string, perTxn, writers int) report.Burst {
	res := report.Burst{Label: label, Events: burstEvents, Revisions: burstEvents / perTxn}
	kvs := burstRecords(fmt.Sprintf("burst%d", perTxn), burstEvents)
	before, err := readApplyStats(ctx, inst)
	start := time.Now()
	var rev int64
	if err == nil {
		rev, err = writeConcurrently(ctx, b.etcdClient(), kvs, perTxn, writers)
	}
	res.Acked = time.Since(start)
	if err == nil {
		err = atRevision(rev)(ctx, inst, 2*time.Minute)
	}
	res.Applied = time.Since(start)
	if err == nil {
		err = countApplied(ctx, inst, before, &res)
	}
	if err != nil {
		res.Problem = err.Error()
	}
	b.logf("burst of %s: acked in %s, applied in %s", label, res.Acked.Round(time.Millisecond), res.Applied.Round(time.Millisecond))
	return res
}

// burstRecords returns n A records of new names in namespace ns.
func burstRecords(ns string, n int) []gendata.KV {
	kvs := make([]gendata.KV, n)
	for i := range kvs {
		var ip [4]byte
		binary.BigEndian.PutUint32(ip[:], 10<<24|200<<16+uint32(i)+1)
		name := fmt.Sprintf("b%d.%s.svc.%s.", i, ns, zone)
		kvs[i] = gendata.KV{Key: contract.Key(contract.DefaultPrefix, name) + "/x",
			Value: string(contract.Record{Host: netip.AddrFrom4(ip).String()}.Encode())}
	}
	return kvs
}

// writeConcurrently writes kvs in transactions of perTxn puts from writers
// goroutines, and returns the highest revision written.
func writeConcurrently(ctx context.Context, c *clientv3.Client, kvs []gendata.KV, perTxn, writers int) (int64, error) {
	batches := make(chan []gendata.KV)
	go func() {
		defer close(batches)
		for i := 0; i < len(kvs); i += perTxn {
			batches <- kvs[i:min(i+perTxn, len(kvs))]
		}
	}()
	var mu sync.Mutex
	var maxRev int64
	var firstErr error
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for batch := range batches {
				rev, err := gendata.Load(ctx, c, batch, perTxn)
				mu.Lock()
				maxRev = max(maxRev, rev)
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return maxRev, firstErr
}

// visibility puts 20 new names one after another and times each until
// skydns answers it.
func (b *bench) visibility(ctx context.Context, inst *instance, services int) report.Visibility {
	v := report.Visibility{Services: services}
	for i, kv := range burstRecords("visible", 20) {
		name := fmt.Sprintf("b%d.visible.svc.%s.", i, zone)
		start := time.Now()
		if _, err := gendata.Load(ctx, b.etcdClient(), []gendata.KV{kv}, 1); err != nil {
			b.logf("visibility: %v", err)
			return v
		}
		acked := time.Since(start)
		if err := waitVisible(ctx, inst.addr, name, 10*time.Second); err != nil {
			b.logf("visibility: %v", err)
			return v
		}
		v.Samples, v.Acks = append(v.Samples, time.Since(start)), append(v.Acks, acked)
	}
	return v
}

// waitVisible queries name back to back, without pausing (the wait is
// what is measured), until skydns answers it.
func waitVisible(ctx context.Context, addr, name string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := answers(addr, name, 100*time.Millisecond)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s not answered after %s: %v", name, timeout, err)
		}
	}
}
