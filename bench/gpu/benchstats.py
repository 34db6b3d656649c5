"""Pooling ratios for the GPU overhead tools (lockstep_summary.py, cuptitoggle.py, hostcost.py): the geometric
mean of per-sample ratios with a 95 % t-interval over the samples (the spread between samples is the honest
error: steps inside one sample are correlated)."""
import math
import statistics

# two-sided 95 % t quantiles by degrees of freedom (1-30); beyond, 2.0
T975 = [float("nan"), 12.71, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
        2.045, 2.042]


def t975(df):
    return T975[df] if 0 < df < len(T975) else 2.0


def pooled(ratios):
    """(geometric mean, low, high) of ratios; the interval is nan for a single sample."""
    ls = [math.log(r) for r in ratios]
    m = statistics.mean(ls)
    if len(ls) < 2:
        return math.exp(m), float("nan"), float("nan")
    h = t975(len(ls) - 1) * statistics.stdev(ls) / math.sqrt(len(ls))
    return math.exp(m), math.exp(m - h), math.exp(m + h)


def geo(xs):
    """Geometric mean."""
    return math.exp(statistics.mean(math.log(x) for x in xs))
