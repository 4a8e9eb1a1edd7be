// Package report turns the benchmark's measurements into Markdown tables:
// medians over rounds, ratios against the reference servers, the targets
// and whether they hold, and skydns's memory figures.
package report
