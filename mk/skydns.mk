# skydns extras. The root Makefile builds ./cmd/skydns into bin/ and runs its tests.

.PHONY: skydns-interop

## skydns-interop: compare skydns's answers with CoreDNS's etcd plugin on the same etcd (builds CoreDNS first)
skydns-interop: coredns
	go test -count=1 -run TestInterop -v ./skydns
