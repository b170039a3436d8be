"""Ratios that say how sure they are. A measured run and its baseline run
back to back, again and again (ABAB...); each pair gives one ratio, so a
burst of other load that hits both cancels out. The ratio reported is the
median of those paired ratios, with a bootstrap 95% interval of that median
beside it. A target is met when the whole interval is within the limit,
missed when the whole interval is beyond it, and "noise" when the interval
straddles it: this machine cannot tell, and the report says so."""
import random
import statistics

BOOTSTRAP_RESAMPLES = 2000
CONFIDENCE = 0.95


def paired(measured, baseline):
    """measured[i] / baseline[i] for every pair whose baseline is not 0."""
    return [m / b for m, b in zip(measured, baseline) if b]


def median_interval(ratios, resamples=BOOTSTRAP_RESAMPLES, confidence=CONFIDENCE, seed=18):
    """(median, low, high): the percentile bootstrap interval of the median.
    Seeded, so a report drawn twice from one results.json says the same."""
    if not ratios:
        return None
    rng = random.Random(seed)
    medians = sorted(statistics.median(rng.choices(ratios, k=len(ratios)))
                     for _ in range(resamples))
    tail = (1.0 - confidence) / 2.0
    low = medians[int(tail * (resamples - 1))]
    high = medians[int(round((1.0 - tail) * (resamples - 1)))]
    return statistics.median(ratios), low, high


def judge(low, high, limit):
    """True (met), False (missed) or "noise" for a ratio that must stay at
    or below `limit`."""
    if high <= limit:
        return True
    if low > limit:
        return False
    return "noise"
