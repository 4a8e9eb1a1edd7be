# The black-box hostile traffic test: the built skydns under a flood of
# mutated and random datagrams, lying TCP frames, 10 000 idle connections
# and clients that never read (cmd/skydns/hostile_test.go, ~2 min).

.PHONY: test-hostile

test-hostile: build ## hostile traffic against bin/skydns: a well-behaved client's answers, memory, TCP limits (~2 min)
	SKYDNS_HOSTILE_BINARY=$(abspath $(BIN)/skydns) $(GO) test -count=1 -v -timeout 6m -run '^TestHostileTraffic$$' ./cmd/skydns/
