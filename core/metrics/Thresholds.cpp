// Thresholds.cpp — see Thresholds.h.
#include "core/metrics/Thresholds.h"

#include "core/metrics/Edge.h"
#include "core/metrics/Maximise.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace headlab {

namespace {

// log [Φ(b) − Φ(a)], a < b, ±infinity allowed, from the tail where it is accurate.
double logProbBetween(double a, double b)
{
    constexpr double kRootHalf = 0.70710678118654752440;
    double p;
    if (a > 0) // both in the upper tail: Q(a) − Q(b)
        p = 0.5 * std::erfc(a * kRootHalf) - (std::isinf(b) ? 0.0 : 0.5 * std::erfc(b * kRootHalf));
    else
        p = (std::isinf(b) ? 1.0 : 0.5 * std::erfc(-b * kRootHalf)) -
            (std::isinf(a) ? 0.0 : 0.5 * std::erfc(-a * kRootHalf));
    return std::log(std::max(p, 1e-300));
}

double logLikelihood(const std::vector<SeedBracket> &brackets, double mu, double sigma)
{
    double sum = 0;
    for (const auto &s : brackets)
        sum += logProbBetween((s.low - mu) / sigma, (s.high - mu) / sigma);
    return sum;
}

struct Profile {
    double logLik, sigma;
};

// max over σ of log L(μ, σ), σ in [sigmaMin, sigmaMax] (in log σ).
Profile profileAt(const std::vector<SeedBracket> &brackets, double mu, double sigmaMin,
                  double sigmaMax)
{
    auto f = [&](double logSigma) { return logLikelihood(brackets, mu, std::exp(logSigma)); };
    // No grid: the whole range is the bracket, shrunk to 10^-9 of itself.
    const Maximum best = maximiseOnGrid(f, std::log(sigmaMin), std::log(sigmaMax), 1, 45);
    return {best.value, std::exp(best.x)};
}

// P(0 ≤ T ≤ t) for Student's t with ν degrees of freedom, by Simpson's rule on its density
// (t ≥ 0).
double studentTHalfMass(double t, double dof)
{
    const double logNorm = std::lgamma((dof + 1) / 2) - std::lgamma(dof / 2) -
                           0.5 * std::log(dof * 3.14159265358979323846);
    auto density = [&](double x) {
        return std::exp(logNorm - (dof + 1) / 2 * std::log1p(x * x / dof));
    };
    constexpr int kIntervals = 2000; // even
    const double h = t / kIntervals;
    double sum = density(0) + density(t);
    for (int i = 1; i < kIntervals; ++i) sum += (i % 2 ? 4 : 2) * density(i * h);
    return sum * h / 3;
}

} // namespace

SeedBracket seedBracket(std::vector<SeedVerdict> verdicts, bool learnedBelow)
{
    SeedBracket bracket;
    bracket.runs = int(verdicts.size());
    if (verdicts.empty()) return bracket;
    // Distinct values, each with its count of verdicts on the "threshold above" side (learned for
    // learnedBelow) and on the other.
    std::map<double, std::pair<int, int>> byValue; // x → (below-side verdicts, above-side)
    for (const auto &v : verdicts) {
        const bool belowSide = v.learned == learnedBelow;
        auto &counts = byValue[v.x];
        (belowSide ? counts.first : counts.second) += 1;
    }
    std::vector<double> xs;
    std::vector<std::pair<int, int>> counts;
    for (const auto &[x, c] : byValue) {
        xs.push_back(x);
        counts.push_back(c);
    }
    const size_t n = xs.size();
    // Cut k: the threshold between xs[k − 1] and xs[k]; points before it should be on the
    // below side. Wrong verdicts = above-side verdicts before the cut + below-side ones after it.
    std::vector<int> wrong(n + 1, 0);
    int belowAfter = 0;
    for (const auto &c : counts) belowAfter += c.first;
    int aboveBefore = 0;
    for (size_t k = 0; k <= n; ++k) {
        wrong[k] = aboveBefore + belowAfter;
        if (k < n) {
            aboveBefore += counts[k].second;
            belowAfter -= counts[k].first;
        }
    }
    const int fewest = *std::min_element(wrong.begin(), wrong.end());
    std::vector<size_t> best;
    for (size_t k = 0; k <= n; ++k)
        if (wrong[k] == fewest) best.push_back(k);
    const size_t k = best[(best.size() - 1) / 2];
    bracket.wrong = fewest;
    bracket.low = k > 0 ? xs[k - 1] : -INFINITY;
    bracket.high = k < n ? xs[k] : INFINITY;
    return bracket;
}

double studentTTwoSided(double t, double dof)
{
    if (!(dof > 0) || !std::isfinite(t)) return NAN;
    return std::max(0.0, 1 - 2 * studentTHalfMass(std::fabs(t), dof));
}

double studentTQuantile(double p, double dof)
{
    if (!(p > 0 && p < 1) || !(dof > 0)) return NAN;
    // Tens of bisections of a 2,000-interval Simpson sum; a search asks again for each seed count.
    thread_local std::map<std::pair<double, double>, double> known;
    if (const auto it = known.find({p, dof}); it != known.end()) return it->second;
    if (known.size() > 256) known.clear();
    const double half = std::fabs(p - 0.5);
    double low = 0, high = 1;
    while (studentTHalfMass(high, dof) < half && high < 1e8) high *= 2;
    for (int i = 0; i < 100 && high - low > 1e-10 * high; ++i) {
        const double mid = (low + high) / 2;
        (studentTHalfMass(mid, dof) < half ? low : high) = mid;
    }
    const double t = (low + high) / 2;
    return known[{p, dof}] = p < 0.5 ? -t : t;
}

ThresholdFit fitThresholds(const std::vector<SeedBracket> &brackets, double level, double xMin,
                           double xMax)
{
    ThresholdFit fit;
    std::vector<SeedBracket> used;
    for (const auto &b : brackets)
        if (std::isfinite(b.low) || std::isfinite(b.high)) used.push_back(b);
    fit.seeds = int(used.size());
    if (used.empty()) return fit;
    const double span = std::max(xMax - xMin, 1e-9);
    const double muLow = xMin - span, muHigh = xMax + span;
    const double sigmaMin = span / 1000, sigmaMax = 10 * span;
    auto profile = [&](double mu) { return profileAt(used, mu, sigmaMin, sigmaMax).logLik; };
    // The profile is unimodal in μ for a fixed σ (a normal's interval probabilities are log-concave
    // in location); a coarse scan guards the golden search against a flat start, which then
    // shrinks its bracket to ~10^-9 decades.
    const double mu = maximiseOnGrid(profile, muLow, muHigh, 40, 40).x;
    const Profile best = profileAt(used, mu, sigmaMin, sigmaMax);
    fit.ok = true;
    fit.mu = mu;
    fit.sigma = best.sigma;
    fit.logLik = best.logLik;
    fit.interval.ok = true;
    fit.interval.estimate = mu;
    // The cut-off: K log(1 + t²/(K − 1)), the profile deviance at which exact normal thresholds
    // give Student's t interval of their mean. One seed has no interval.
    const int k = fit.seeds;
    const double cutoff =
        k >= 2 ? k * std::log1p(std::pow(studentTQuantile((1 + level) / 2, k - 1), 2) / (k - 1))
               : INFINITY;
    // √deviance − √cut-off: positive outside the interval, near linear in μ at its edges.
    const double rootCutoff = std::sqrt(cutoff);
    auto excess = [&](double m) {
        return std::sqrt(std::max(0.0, 2 * (best.logLik - profile(m)))) - rootCutoff;
    };
    auto edge = [&](double limit, bool *open) {
        const double atLimit = excess(limit);
        if (!(atLimit > 0)) {
            *open = true;
            return limit;
        }
        return edgeBetween(excess, mu, -rootCutoff, limit, atLimit, 1e-6 * span);
    };
    fit.interval.low = edge(muLow, &fit.interval.lowOpen);
    fit.interval.high = edge(muHigh, &fit.interval.highOpen);
    return fit;
}

} // namespace headlab
