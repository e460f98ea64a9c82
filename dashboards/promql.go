package dashboards

import (
	"fmt"
	"strings"
)

// Label matchers of inferprobe's own series: the mixin's selector and the
// job and instance variables inside it. Files sets them from the mixin's
// config before it builds the dashboards.
var ownMatchers []string

// Label matchers of the request metrics for the target, model and scenario
// variables.
const (
	matchTarget   = `target=~"$target"`
	matchModel    = `model=~"$model"`
	matchScenario = `scenario=~"$scenario"`
)

// Range selectors: $__rate_interval in every rate (at least four scrapes,
// whatever the scrape interval), $__range for totals over the time range.
const (
	rateWindow  = "[$__rate_interval]"
	rangeWindow = "[$__range]"
)

// sumBy renders sum by (labels) (expr), or sum (expr) without labels.
func sumBy(by, expr string) string {
	if by == "" {
		return "sum (" + expr + ")"
	}
	return "sum by (" + by + ") (" + expr + ")"
}

// rate renders the per-second rate of metric{sel} over $__rate_interval.
func rate(metric, sel string) string { return "rate(" + metric + sel + rateWindow + ")" }

// increase renders the increase of metric{sel} over the time range.
func increase(metric, sel string) string { return "increase(" + metric + sel + rangeWindow + ")" }

// Every histogram query has two forms joined by `or`: the native histogram's, and the classic
// buckets' (_bucket, _sum, _count) for a Prometheus that stores only those. Only one form exists
// for a series on a given server (Prometheus 3 with native histograms on keeps the classic
// buckets only with always_scrape_classic_histograms, and then the native form wins the `or`),
// so the panel shows the same quantile either way.

// hq renders the q-quantile of a histogram's rate, summed by labels.
func hq(quantile float64, metric, sel, by string) string {
	return fmt.Sprintf("histogram_quantile(%g, %s)\nor\nhistogram_quantile(%g, %s)",
		quantile, sumBy(by, rate(metric, sel)), quantile, sumBy(withLe(by), rate(metric+"_bucket", sel)))
}

// hqRange is hq over the whole time range, for stats.
func hqRange(quantile float64, metric, sel, by string) string {
	return fmt.Sprintf("histogram_quantile(%g, %s)\nor\nhistogram_quantile(%g, %s)",
		quantile, sumBy(by, increase(metric, sel)), quantile, sumBy(withLe(by), increase(metric+"_bucket", sel)))
}

// hmean renders a histogram's mean over $__rate_interval.
func hmean(metric, sel, by string) string {
	r := sumBy(by, rate(metric, sel))
	return "histogram_sum(" + r + ") / histogram_count(" + r + ")\nor\n" +
		sumBy(by, rate(metric+"_sum", sel)) + " / " + sumBy(by, rate(metric+"_count", sel))
}

// hbuckets renders a histogram's buckets' rates, for a heatmap: native histograms, or the
// classic buckets by le.
func hbuckets(metric, sel string) string {
	return sumBy("", rate(metric, sel)) + "\nor\n" + sumBy("le", rate(metric+"_bucket", sel))
}

// withLe adds le to a by clause, as a classic quantile needs.
func withLe(by string) string {
	if by == "" {
		return "le"
	}
	return by + ", le"
}

// quantiles are p50, p90 and p99 of metric by labels, one query each, the
// legend naming the series by legend and the quantile.
func quantiles(metric, sel, by, legend string) []query {
	var qs []query
	for _, p := range []struct {
		q    float64
		name string
	}{{0.5, "p50"}, {0.9, "p90"}, {0.99, "p99"}} {
		qs = append(qs, q(hq(p.q, metric, sel, by), strings.TrimSpace(legend+" "+p.name)))
	}
	return qs
}

// ratio divides two sums by the same labels.
func ratio(num, den, by string) string {
	return sumBy(by, num) + "\n/\n" + sumBy(by, den)
}
