// Logistic.cpp — see Logistic.h.
#include "core/metrics/Logistic.h"

#include "core/metrics/Edge.h"
#include "core/metrics/Maximise.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace headlab {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double sigmoid(double t)
{
    return t >= 0 ? 1 / (1 + std::exp(-t)) : std::exp(t) / (1 + std::exp(t));
}

// The Fisher information of (a, b): Σ n p (1 − p) [1 x; x x²].
struct Information {
    double i00 = 0, i01 = 0, i11 = 0;
    double det() const { return i00 * i11 - i01 * i01; }
};

// The information at (a, b), and with `ll` the log-likelihood, in one pass: one exponential (and
// with `ll` one logarithm) a point. With e = exp(−|t|), log σ(±t) is −log1p(e) on the side of t's
// sign and −|t| − log1p(e) on the other, and σ(t)(1 − σ(t)) = e / (1 + e)².
Information information(const std::vector<BinomialPoint> &points, double a, double b,
                        double *ll = nullptr)
{
    Information info;
    for (const auto &p : points) {
        const double t = a + b * p.x;
        const double e = std::exp(-std::fabs(t));
        if (ll) {
            const double l = std::log1p(e), failures = p.trials - p.successes;
            *ll -= t >= 0 ? p.successes * l + failures * (t + l)
                          : p.successes * (l - t) + failures * l;
        }
        const double w = p.trials * e / ((1 + e) * (1 + e));
        info.i00 += w;
        info.i01 += w * p.x;
        info.i11 += w * p.x * p.x;
    }
    return info;
}

int distinctValues(const std::vector<BinomialPoint> &points)
{
    std::set<double> xs;
    for (const auto &p : points)
        if (p.trials > 0) xs.insert(p.x);
    return static_cast<int>(xs.size());
}

// The regularised upper incomplete gamma function Q(s, x) (series for x < s + 1, else a
// continued fraction; Numerical Recipes' method).
double gammaQ(double s, double x)
{
    if (x <= 0) return 1.0;
    const double logPrefix = s * std::log(x) - x - std::lgamma(s);
    if (x < s + 1) {
        double sum = 1 / s, term = 1 / s;
        for (int n = 1; n < 1000; ++n) {
            term *= x / (s + n);
            sum += term;
            if (std::fabs(term) < std::fabs(sum) * 1e-15) break;
        }
        return std::clamp(1 - sum * std::exp(logPrefix), 0.0, 1.0);
    }
    const double tiny = 1e-300;
    double b = x + 1 - s, c = 1 / tiny, d = 1 / b, h = d;
    for (int i = 1; i < 1000; ++i) {
        const double an = -i * (i - s);
        b += 2;
        d = an * d + b;
        if (std::fabs(d) < tiny) d = tiny;
        c = b + an / c;
        if (std::fabs(c) < tiny) c = tiny;
        d = 1 / d;
        const double delta = d * c;
        h *= delta;
        if (std::fabs(delta - 1) < 1e-15) break;
    }
    return std::clamp(std::exp(logPrefix) * h, 0.0, 1.0);
}

} // namespace

double LogisticFit::probability(double x) const
{
    return sigmoid(a + b * x);
}

double LogisticFit::crossing(double target) const
{
    if (!ok || b == 0) return kNaN;
    return (std::log(target / (1 - target)) - a) / b;
}

double penalizedLogLikelihood(const std::vector<BinomialPoint> &points, double a, double b)
{
    double ll = 0;
    const double det = information(points, a, b, &ll).det();
    if (!(det > 0)) return -std::numeric_limits<double>::infinity();
    return ll + 0.5 * std::log(det);
}

LogisticFit fitLogistic(const std::vector<BinomialPoint> &points)
{
    LogisticFit fit;
    if (distinctValues(points) < 2) return fit;
    int successes = 0, trials = 0;
    for (const auto &p : points) {
        successes += p.successes;
        trials += p.trials;
    }
    // Newton–Raphson on Firth's modified score, with step halving on the penalised likelihood.
    const double p0 = (successes + 0.5) / (trials + 1.0);
    double a = std::log(p0 / (1 - p0)), b = 0;
    double current = penalizedLogLikelihood(points, a, b);
    for (int iteration = 0; iteration < 200; ++iteration) {
        const Information info = information(points, a, b);
        const double det = info.det();
        if (!(det > 0)) break;
        // (XᵀWX)⁻¹
        const double v00 = info.i11 / det, v01 = -info.i01 / det, v11 = info.i00 / det;
        double u0 = 0, u1 = 0;
        for (const auto &p : points) {
            const double q = sigmoid(a + b * p.x);
            const double w = p.trials * q * (1 - q);
            const double h = w * (v00 + 2 * v01 * p.x + v11 * p.x * p.x); // the hat value
            const double r = p.successes - p.trials * q + h * (0.5 - q);
            u0 += r;
            u1 += r * p.x;
        }
        double da = v00 * u0 + v01 * u1, db = v01 * u0 + v11 * u1;
        double next = penalizedLogLikelihood(points, a + da, b + db);
        for (int halving = 0; halving < 40 && !(next >= current); ++halving) {
            da /= 2;
            db /= 2;
            next = penalizedLogLikelihood(points, a + da, b + db);
        }
        if (!(next >= current)) break;
        a += da;
        b += db;
        const bool converged =
            std::fabs(da) + std::fabs(db) < 1e-10 * (1 + std::fabs(a) + std::fabs(b));
        current = next;
        if (converged) break;
    }
    fit.ok = std::isfinite(current);
    fit.a = a;
    fit.b = b;
    fit.penalizedLogLik = current;
    return fit;
}

namespace {

// The best penalised likelihood among curves that cross `target` at `c`, over slopes of the sign
// `sign`: logit P = L + b (x − c). A coarse grid in log |b|, then golden-section refinement.
double profileAt(const std::vector<BinomialPoint> &points, double logitTarget, double c,
                 double sign)
{
    auto value = [&](double logSlope) {
        const double b = sign * std::exp(logSlope);
        return penalizedLogLikelihood(points, logitTarget - b * c, b);
    };
    // |b| from 1e-4 to 1.6e5 per unit of x; the golden section shrinks its bracket to
    // 0.5 · 0.618^30 ≈ 3e-7 in log |b|.
    return maximiseOnGrid(value, -9.0, 12.0, 42, 30).value;
}

} // namespace

CrossingInterval crossingInterval(const std::vector<BinomialPoint> &points, double target,
                                  double level, double xMin, double xMax)
{
    return crossingInterval(points, fitLogistic(points), target, level, xMin, xMax);
}

CrossingInterval crossingInterval(const std::vector<BinomialPoint> &points, const LogisticFit &fit,
                                  double target, double level, double xMin, double xMax)
{
    CrossingInterval interval;
    const double estimate = fit.crossing(target);
    if (!fit.ok || !std::isfinite(estimate)) return interval;
    const double sign = fit.b > 0 ? 1.0 : -1.0;
    const double logitTarget = std::log(target / (1 - target));
    const double span = std::max(xMax - xMin, 1e-12);
    const double searchLow = xMin - span, searchHigh = xMax + span;
    const double best =
        std::max(fit.penalizedLogLik, profileAt(points, logitTarget, estimate, sign));
    const double limit = chiSquareQuantile(level, 1.0), rootLimit = std::sqrt(limit);
    // √deviance − √limit: positive outside the interval, and near linear in c at its edges.
    auto excess = [&](double c) {
        return std::sqrt(std::max(0.0, 2 * (best - profileAt(points, logitTarget, c, sign)))) -
               rootLimit;
    };

    interval.ok = true;
    interval.estimate = estimate;
    // Walk out from the estimate in steps of span / 40, then find the edge within the last step
    // to span · 1e-6.
    auto edge = [&](double direction, double bound, bool *open) {
        const double step = span / 40;
        double inside = std::clamp(estimate, searchLow, searchHigh), fInside = -rootLimit;
        for (;;) {
            const double next = inside + direction * step;
            if ((direction > 0 && next > bound) || (direction < 0 && next < bound)) {
                *open = true;
                return bound;
            }
            const double f = excess(next);
            if (f > 0) return edgeBetween(excess, inside, fInside, next, f, span * 1e-6);
            inside = next;
            fInside = f;
        }
    };
    interval.low = edge(-1, searchLow, &interval.lowOpen);
    interval.high = edge(+1, searchHigh, &interval.highOpen);
    return interval;
}

double chiSquareSurvival(double x, double dof)
{
    return gammaQ(dof / 2, x / 2);
}

double chiSquareQuantile(double p, double dof)
{
    // 200 bisections of the incomplete gamma function; every interval asks for the same level.
    thread_local double lastP = NAN, lastDof = NAN, lastValue = NAN;
    if (p == lastP && dof == lastDof) return lastValue;
    double low = 0, high = 1;
    while (1 - chiSquareSurvival(high, dof) < p) high *= 2;
    for (int i = 0; i < 200; ++i) {
        const double mid = (low + high) / 2;
        (1 - chiSquareSurvival(mid, dof) < p ? low : high) = mid;
    }
    lastP = p;
    lastDof = dof;
    return lastValue = (low + high) / 2;
}

double normalQuantile(double p)
{
    // χ²₁ = Z²: the two-sided quantile, signed.
    const double z = std::sqrt(chiSquareQuantile(std::fabs(2 * p - 1), 1.0));
    return p < 0.5 ? -z : z;
}

LinearFit fitLinear(const std::vector<std::vector<double>> &predictors,
                    const std::vector<double> &y, const std::vector<double> &sigma)
{
    LinearFit fit;
    const size_t n = y.size();
    if (n == 0 || predictors.size() != n || sigma.size() != n) return fit;
    const size_t k = predictors.front().size() + 1; // with the intercept
    if (n < k) return fit;
    // Normal equations (XᵀWX) c = XᵀWy, solved with Gauss–Jordan on [A | I | b].
    std::vector<std::vector<double>> a(k, std::vector<double>(2 * k + 1, 0.0));
    for (size_t i = 0; i < n; ++i) {
        if (!(sigma[i] > 0) || predictors[i].size() + 1 != k) return fit;
        std::vector<double> row = {1.0};
        row.insert(row.end(), predictors[i].begin(), predictors[i].end());
        const double w = 1 / (sigma[i] * sigma[i]);
        for (size_t r = 0; r < k; ++r) {
            for (size_t c = 0; c < k; ++c) a[r][c] += w * row[r] * row[c];
            a[r][2 * k] += w * row[r] * y[i];
        }
    }
    for (size_t r = 0; r < k; ++r) a[r][k + r] = 1;
    for (size_t col = 0; col < k; ++col) {
        size_t pivot = col;
        for (size_t r = col + 1; r < k; ++r)
            if (std::fabs(a[r][col]) > std::fabs(a[pivot][col])) pivot = r;
        if (std::fabs(a[pivot][col]) < 1e-300) return fit;
        std::swap(a[col], a[pivot]);
        const double d = a[col][col];
        for (auto &v : a[col]) v /= d;
        for (size_t r = 0; r < k; ++r) {
            if (r == col) continue;
            const double f = a[r][col];
            if (f == 0) continue;
            for (size_t c = 0; c <= 2 * k; ++c) a[r][c] -= f * a[col][c];
        }
    }
    fit.coef.resize(k);
    for (size_t r = 0; r < k; ++r) fit.coef[r] = a[r][2 * k];
    for (size_t i = 0; i < n; ++i) {
        double predicted = fit.coef[0];
        for (size_t c = 1; c < k; ++c) predicted += fit.coef[c] * predictors[i][c - 1];
        const double r = (y[i] - predicted) / sigma[i];
        fit.chi2 += r * r;
    }
    fit.dof = static_cast<int>(n - k);
    fit.scale = fit.dof > 0 ? std::max(1.0, fit.chi2 / fit.dof) : 1.0;
    fit.se.resize(k);
    fit.covariance.assign(k, std::vector<double>(k));
    for (size_t r = 0; r < k; ++r) {
        fit.se[r] = std::sqrt(fit.scale * a[r][k + r]);
        for (size_t c = 0; c < k; ++c) fit.covariance[r][c] = fit.scale * a[r][k + c];
    }
    fit.ok = true;
    return fit;
}

std::pair<double, double> wilsonInterval(int successes, int n)
{
    if (n <= 0) return {0.0, 1.0};
    const double z = 1.959963984540054, p = double(successes) / n, z2n = z * z / n;
    const double centre = (p + z2n / 2) / (1 + z2n);
    const double half = z * std::sqrt(p * (1 - p) / n + z2n / (4.0 * n)) / (1 + z2n);
    return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

} // namespace headlab
