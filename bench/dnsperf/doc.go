// Package dnsperf runs the dnsperf load generator and reads its report:
// queries sent, completed and lost, queries per second, and, from the
// per-response lines of -v, the latency distribution and the response codes.
package dnsperf
