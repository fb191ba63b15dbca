// Thresholds.h — paired seeds: each seed's own threshold along the searched axis, and the spread
// of those thresholds over seeds as the P(learned) curve.
//
// With the same seed (initialisation and data order) at every value of a configuration, a seed
// whose outcome is monotone in the value has a threshold of its own: it learns on one side of
// it, not on the other. Its runs bracket that threshold, and a bisection per seed narrows the
// bracket. Over seeds, the thresholds T_s are a sample of a distribution whose CDF is the
// P(learned) curve: its median is the crossing of ½. The fit here takes T_s ~ N(μ, σ²) in the
// search's units and each seed's bracket as an interval-censored observation of T_s:
//
//     log L(μ, σ) = Σ_s log [Φ((high_s − μ)/σ) − Φ((low_s − μ)/σ)],
//
// a side the seed has not closed being ±∞. μ's interval is the profile of that likelihood, with
// the cut-off of Student's t for the number of seeds (for exact thresholds it is the t interval
// of their mean), so that a handful of seeds cannot give a narrow interval by chance.
//
// A seed whose outcome is not monotone (it learned above a value where it failed) has no
// threshold; its bracket is the one around its best single threshold (the cut that gets the
// fewest verdicts wrong), and it is counted as not monotone. Torch-free.
#pragma once

#include "core/metrics/Logistic.h"

#include <cmath>
#include <vector>

namespace headlab {

// One run's verdict at x (search units).
struct SeedVerdict {
    double x = 0;
    bool learned = false;
};

// Where one seed's threshold lies: in (low, high), a side at ±infinity where the seed's runs do
// not close it.
struct SeedBracket {
    double low = -INFINITY, high = INFINITY;
    int runs = 0;
    int wrong = 0; // verdicts its best single threshold gets wrong (0: monotone)
    bool monotone() const { return wrong == 0; }
    bool closed() const { return std::isfinite(low) && std::isfinite(high); }
};

// A seed's bracket from its verdicts. `learnedBelow`: the seed learns at values below its
// threshold (η: too large a step fails); else above. Among the cuts that get the fewest verdicts
// wrong, the middle one (the lower of two).
SeedBracket seedBracket(std::vector<SeedVerdict> verdicts, bool learnedBelow);

struct ThresholdFit {
    bool ok = false;          // false: no seed has a bracket closed on either side
    double mu = 0, sigma = 0; // of the thresholds, search units
    int seeds = 0;
    double logLik = 0;
    CrossingInterval interval; // μ's, at the level asked for
};

// The fit over the brackets. μ is looked for within [xMin − span, xMax + span], span = xMax −
// xMin, and σ within [span/1000, 10 span]; a side of μ's interval not closed there is open.
ThresholdFit fitThresholds(const std::vector<SeedBracket> &brackets, double level, double xMin,
                           double xMax);

// Student's t quantile with `dof` degrees of freedom at probability p (0 < p < 1).
double studentTQuantile(double p, double dof);
// P(|T| > |t|) for Student's t with `dof` degrees of freedom: also the survival of F(1, dof) at t².
double studentTTwoSided(double t, double dof);

} // namespace headlab
