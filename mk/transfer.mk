# Zone transfers: the zone's contents, the ACL and NOTIFY (skydns/transfer), the
# daemon's AXFR/IXFR over real sockets (skydns), and Knot DNS as a real secondary of
# the built skydns (cmd/skydns; needs knotd, Debian package knot). All of these also
# run in make test-unit.

.PHONY: test-transfer

test-transfer: ## zone transfers: AXFR/IXFR, NOTIFY, and Knot DNS as a real secondary (needs knotd)
	$(GO) test -race -count=1 ./skydns/transfer/
	$(GO) test -race -count=1 -run 'TestAnAllowedClient|TestAClientOutsideTheAllowList|TestAChangeIsNotified|Transfer' ./skydns/
	$(GO) test -race -count=1 -v -run '^TestASecondaryFollowsTheZoneThroughNotify$$' ./cmd/skydns/
