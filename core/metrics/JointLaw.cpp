// JointLaw.cpp — the joint boundary model of JointLaw.h: a ridge-penalised logistic regression
// solved by Newton's method, its random-effect width by the restricted Laplace likelihood.
#include "core/metrics/JointLaw.h"

#include "core/metrics/Edge.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace headlab {
namespace {

using Matrix = std::vector<std::vector<double>>;

constexpr double kSlopePriorSd = 50;  // logits per unit of x: far steeper than any real boundary
constexpr double kSigmaCaution = 1.0; // deviance: σ_u's one-sided ~84 % upper bound

// Cholesky factor L (A = L Lᵀ) of a symmetric positive definite matrix; false when it is not.
bool cholesky(const Matrix &a, Matrix &l)
{
    const size_t n = a.size();
    l.assign(n, std::vector<double>(n, 0.0));
    for (size_t j = 0; j < n; ++j) {
        double d = a[j][j];
        for (size_t k = 0; k < j; ++k) d -= l[j][k] * l[j][k];
        if (!(d > 1e-12 * std::max(1.0, std::fabs(a[j][j])))) return false;
        l[j][j] = std::sqrt(d);
        for (size_t i = j + 1; i < n; ++i) {
            double v = a[i][j];
            for (size_t k = 0; k < j; ++k) v -= l[i][k] * l[j][k];
            l[i][j] = v / l[j][j];
        }
    }
    return true;
}

// A⁻¹ b in place, from A's Cholesky factor.
void choleskySolveInPlace(const Matrix &l, std::vector<double> &b)
{
    const size_t n = l.size();
    for (size_t i = 0; i < n; ++i) {
        for (size_t k = 0; k < i; ++k) b[i] -= l[i][k] * b[k];
        b[i] /= l[i][i];
    }
    for (size_t i = n; i-- > 0;) {
        for (size_t k = i + 1; k < n; ++k) b[i] -= l[k][i] * b[k];
        b[i] /= l[i][i];
    }
}

std::vector<double> choleskySolve(const Matrix &l, std::vector<double> b)
{
    choleskySolveInPlace(l, b);
    return b;
}

double logDet(const Matrix &l)
{
    double sum = 0;
    for (size_t i = 0; i < l.size(); ++i) sum += 2 * std::log(l[i][i]);
    return sum;
}

// The problem's layout: parameters a0, b_1 … b_K, s, u_1 … u_C.
struct Problem {
    const std::vector<JointConfiguration> &configurations;
    size_t k = 0; // law coefficients besides the intercept
    size_t size() const { return 2 + k + configurations.size(); }
    size_t slope() const { return 1 + k; }
    size_t u(size_t c) const { return 2 + k + c; }

    // Σ over configurations and points of f(point, design row as (index, value) pairs).
    template <class F>
    void forEachPoint(F &&f) const
    {
        std::vector<std::pair<size_t, double>> row;
        for (size_t c = 0; c < configurations.size(); ++c)
            for (const auto &p : configurations[c].points) {
                if (p.trials <= 0) continue;
                row.clear();
                row.push_back({0, 1.0});
                for (size_t j = 0; j < k; ++j)
                    row.push_back({1 + j, configurations[c].predictors[j]});
                row.push_back({slope(), p.x});
                row.push_back({u(c), 1.0});
                f(p, row);
            }
    }

    double linear(const std::vector<double> &theta,
                  const std::vector<std::pair<size_t, double>> &row) const
    {
        double v = 0;
        for (auto [i, x] : row) v += theta[i] * x;
        return v;
    }

    // One pass over the points, one exponential each: the log-likelihood minus the priors'
    // penalties, without Firth's term (returned when `likelihood`, else 0), and the information
    // matrix Σ n π(1−π) x xᵀ plus the priors' curvature (into *h when given). With e = exp(−|η|),
    // log(1 + e^η) is max(η, 0) + log1p(e) and π(1 − π) is e / (1 + e)².
    double pass(const std::vector<double> &theta, double sigmaU, bool likelihood, Matrix *h) const
    {
        const size_t n = size();
        if (h) h->assign(n, std::vector<double>(n, 0.0));
        double ll = 0;
        forEachPoint([&](const BinomialPoint &p, const auto &row) {
            const double eta = linear(theta, row);
            const double e = std::exp(-std::fabs(eta));
            if (likelihood)
                ll += p.successes * eta - p.trials * (std::max(eta, 0.0) + std::log1p(e));
            if (!h) return;
            const double w = p.trials * e / ((1 + e) * (1 + e));
            for (auto [i, xi] : row)
                for (auto [j, xj] : row) (*h)[i][j] += w * xi * xj;
        });
        if (h) {
            (*h)[slope()][slope()] += 1 / (kSlopePriorSd * kSlopePriorSd);
            for (size_t c = 0; c < configurations.size(); ++c)
                (*h)[u(c)][u(c)] += 1 / (sigmaU * sigmaU);
        }
        if (!likelihood) return 0;
        double penalty = theta[slope()] * theta[slope()] / (2 * kSlopePriorSd * kSlopePriorSd);
        for (size_t c = 0; c < configurations.size(); ++c)
            penalty += theta[u(c)] * theta[u(c)] / (2 * sigmaU * sigmaU);
        return ll - penalty;
    }

    void information(const std::vector<double> &theta, double sigmaU, Matrix &h) const
    {
        pass(theta, sigmaU, false, &h);
    }

    double penalisedLikelihood(const std::vector<double> &theta, double sigmaU) const
    {
        return pass(theta, sigmaU, true, nullptr);
    }

    // What the fit maximises: the penalised log-likelihood plus Firth's ½ log det I (Firth 1993),
    // which keeps the shared slope finite and the crossings' profiles honest when every
    // configuration's outcomes are separated, as the separate model's fit does.
    double objective(const std::vector<double> &theta, double sigmaU) const
    {
        Matrix h, l;
        const double ll = pass(theta, sigmaU, true, &h);
        if (!cholesky(h, l)) return -std::numeric_limits<double>::infinity();
        return ll + 0.5 * logDet(l);
    }

    // The objective's gradient (the score with Firth's leverage term, Σ (y − nπ + h (½ − π)) x, h
    // the point's leverage n π(1−π) xᵀ I⁻¹ x), the information matrix I and its Cholesky factor l.
    bool derivatives(const std::vector<double> &theta, double sigmaU, std::vector<double> &g,
                     Matrix &h, Matrix &l) const
    {
        information(theta, sigmaU, h);
        if (!cholesky(h, l)) return false;
        // I⁻¹ once; a point's leverage then reads only the entries of its row's few columns.
        Matrix inverse(size(), std::vector<double>(size(), 0.0));
        for (size_t i = 0; i < size(); ++i) {
            inverse[i][i] = 1;
            choleskySolveInPlace(l, inverse[i]);
        }
        g.assign(size(), 0.0);
        forEachPoint([&](const BinomialPoint &p, const auto &row) {
            const double prob = 1 / (1 + std::exp(-linear(theta, row)));
            const double w = p.trials * prob * (1 - prob);
            double leverage = 0;
            for (auto [i, xi] : row)
                for (auto [j, xj] : row) leverage += xi * inverse[i][j] * xj;
            leverage *= w;
            const double r = p.successes - p.trials * prob + leverage * (0.5 - prob);
            for (auto [i, xi] : row) g[i] += r * xi;
        });
        g[slope()] -= theta[slope()] / (kSlopePriorSd * kSlopePriorSd);
        for (size_t c = 0; c < configurations.size(); ++c)
            g[u(c)] -= theta[u(c)] / (sigmaU * sigmaU);
        return true;
    }

    // Newton's method from theta: the maximum of the objective, or with `w` its maximum on the
    // hyperplane wᵀθ = r (theta moved onto it first; the constraint's multiplier in closed form,
    // H⁻¹ by Cholesky, every step inside the plane). −∞ when the information matrix is singular
    // (a law not identified).
    double ascend(std::vector<double> &theta, double sigmaU, const std::vector<double> *w = nullptr,
                  double r = 0, int *iterations = nullptr) const
    {
        if (w) {
            double ww = 0, residual = r;
            for (size_t i = 0; i < w->size(); ++i) {
                ww += (*w)[i] * (*w)[i];
                residual -= (*w)[i] * theta[i];
            }
            for (size_t i = 0; i < w->size(); ++i) theta[i] += (*w)[i] * residual / ww;
        }
        std::vector<double> g;
        Matrix h, l;
        double value = objective(theta, sigmaU);
        for (int it = 0; it < 50; ++it) {
            if (!derivatives(theta, sigmaU, g, h, l))
                return -std::numeric_limits<double>::infinity();
            if (iterations) ++*iterations;
            std::vector<double> step = choleskySolve(l, g);
            if (w) {
                const std::vector<double> hw = choleskySolve(l, *w);
                double wHg = 0, wHw = 0;
                for (size_t i = 0; i < w->size(); ++i) {
                    wHg += (*w)[i] * step[i];
                    wHw += (*w)[i] * hw[i];
                }
                for (size_t i = 0; i < step.size(); ++i) step[i] -= wHg / wHw * hw[i];
            }
            double decrement = 0;
            for (size_t i = 0; i < g.size(); ++i) decrement += g[i] * step[i];
            if (decrement < 1e-10) break;
            double t = 1;
            for (int half = 0; half < 40; ++half, t /= 2) {
                std::vector<double> next = theta;
                for (size_t i = 0; i < next.size(); ++i) next[i] += t * step[i];
                const double v = objective(next, sigmaU);
                if (v >= value - 1e-12) {
                    theta = std::move(next);
                    value = v;
                    break;
                }
            }
        }
        return value;
    }

    // The restricted Laplace log-likelihood of sigmaU at the fit theta: the penalised likelihood
    // (without Firth's term), the normal prior's normalisation, and the curvature of a0, b and u
    // (s held at its mode).
    double restricted(const std::vector<double> &theta, double sigmaU) const
    {
        Matrix h, l;
        information(theta, sigmaU, h);
        Matrix block;
        for (size_t i = 0; i < size(); ++i) {
            if (i == slope()) continue;
            std::vector<double> row;
            for (size_t j = 0; j < size(); ++j)
                if (j != slope()) row.push_back(h[i][j]);
            block.push_back(std::move(row));
        }
        if (!cholesky(block, l)) return -std::numeric_limits<double>::infinity();
        return penalisedLikelihood(theta, sigmaU) -
               double(configurations.size()) * std::log(sigmaU) - 0.5 * logDet(l);
    }
};

// The profile interval of a quantity q(θ) defined by a linear constraint wᵀθ = r that depends
// on the value v asked for (constraint(v) gives w, r): the v whose profile deviance from the best
// fit is below `limit`, looked for within [low, high]. Walks out from the estimate in steps that
// grow from `step`, then finds the edge within the last one (Edge.h); a side not closed by the bound is open.
struct ProfileEdges {
    double low = 0, high = 0;
    bool lowOpen = false, highOpen = false;
};

template <class Constraint>
ProfileEdges profileInterval(const Problem &problem, const std::vector<double> &best, double sigmaU,
                             double bestValue, double estimate, double step, double low,
                             double high, double limit, Constraint constraint)
{
    // √deviance − √limit: positive outside the interval, near linear in v at its edges.
    const double rootLimit = std::sqrt(limit);
    auto excess = [&](double v, std::vector<double> &start) {
        const auto [w, r] = constraint(v);
        const double deviance = 2 * (bestValue - problem.ascend(start, sigmaU, &w, r));
        return std::sqrt(std::max(0.0, deviance)) - rootLimit;
    };
    auto edge = [&](double direction, double bound, bool *open) {
        std::vector<double> start = best; // the fit at the last value found inside
        double inside = std::clamp(estimate, low, high), fInside = -rootLimit;
        double d = std::clamp(step, 1e-3 * (high - low), 0.1 * (high - low));
        for (;;) {
            const double next = std::clamp(inside + direction * d, low, high);
            std::vector<double> trial = start;
            const double f = excess(next, trial);
            if (f > 0) {
                auto warm = [&](double v) {
                    std::vector<double> probe = start;
                    const double fv = excess(v, probe);
                    if (!(fv > 0)) start = std::move(probe);
                    return fv;
                };
                return edgeBetween(warm, inside, fInside, next, f, 1e-6 * (high - low));
            }
            if (next == bound) {
                *open = true;
                return bound;
            }
            inside = next;
            fInside = f;
            start = std::move(trial);
            d *= 1.5;
        }
    };
    ProfileEdges edges;
    edges.low = edge(-1, low, &edges.lowOpen);
    edges.high = edge(+1, high, &edges.highOpen);
    return edges;
}

} // namespace

JointFit fitJointLaw(const std::vector<JointConfiguration> &configurations, double target,
                     double level, const std::vector<double> &slopeReferences)
{
    JointFit fit;
    fit.level = level;
    const size_t nc = configurations.size();
    std::set<double> xs;
    std::set<std::vector<double>> rows;
    size_t withVerdicts = 0, k = nc ? configurations.front().predictors.size() : 0;
    for (const auto &c : configurations) {
        if (c.predictors.size() != k) {
            fit.note = "the configurations do not have the same law axes";
            return fit;
        }
        bool any = false;
        for (const auto &p : c.points)
            if (p.trials > 0) {
                xs.insert(p.x);
                any = true;
            }
        withVerdicts += any;
        rows.insert(c.predictors);
    }
    if (withVerdicts < 2 || xs.size() < 2) {
        fit.note = "the joint model needs two configurations with verdicts and two distinct values";
        return fit;
    }
    if (rows.size() < k + 1) {
        fit.note = std::to_string(rows.size()) + " distinct values of the law's axes: its " +
                   std::to_string(k + 1) + " coefficients need as many";
        return fit;
    }

    Problem problem{configurations, k};
    std::vector<double> theta(problem.size(), 0.0);
    // Choose σ_u: the restricted likelihood over log σ_u, on a grid and then by golden section.
    auto evaluate = [&](double logSigma, std::vector<double> &start) {
        if (!std::isfinite(problem.ascend(start, std::exp(logSigma), nullptr, 0, &fit.iterations)))
            return -std::numeric_limits<double>::infinity();
        return problem.restricted(start, std::exp(logSigma));
    };
    const double lo = std::log(0.01), hi = std::log(100.0);
    constexpr int kGrid = 16;
    int best = -1;
    double bestValue = -INFINITY;
    std::vector<std::vector<double>> starts(kGrid + 1);
    std::vector<double> values(kGrid + 1);
    for (int i = 0; i <= kGrid; ++i) {
        starts[i] = i == 0 ? theta : starts[i - 1];
        const double v = values[i] = evaluate(lo + (hi - lo) * i / kGrid, starts[i]);
        if (v > bestValue) {
            bestValue = v;
            best = i;
        }
    }
    if (best < 0) {
        fit.note = "the law's axes are not independent over these configurations";
        return fit;
    }
    const double step = (hi - lo) / kGrid;
    double left = lo + step * std::max(0, best - 1), right = lo + step * std::min(kGrid, best + 1);
    std::vector<double> start = starts[best];
    const double g = (std::sqrt(5.0) - 1) / 2;
    double m1 = right - g * (right - left), m2 = left + g * (right - left);
    std::vector<double> s1 = start, s2 = start;
    double v1 = evaluate(m1, s1), v2 = evaluate(m2, s2);
    for (int i = 0; i < 10; ++i) {
        if (v1 < v2) {
            left = m1;
            m1 = m2;
            v1 = v2;
            s1 = s2;
            m2 = left + g * (right - left);
            v2 = evaluate(m2, s2);
        } else {
            right = m2;
            m2 = m1;
            v2 = v1;
            s2 = s1;
            m1 = right - g * (right - left);
            v1 = evaluate(m1, s1);
        }
    }
    double logSigma = lo + step * best;
    theta = starts[best];
    if (std::max(v1, v2) > bestValue) {
        logSigma = v1 >= v2 ? m1 : m2;
        theta = v1 >= v2 ? s1 : s2;
        bestValue = std::max(v1, v2);
    }
    fit.tau = std::exp(logSigma); // σ̂_u for now: divided by |s| below
    // The σ_u the intervals are computed at: the upper end of σ_u's restricted-likelihood interval
    // at deviance kSigmaCaution, so that a scatter the configurations cannot yet pin down widens
    // the crossings instead of pulling them onto the law (a plug-in σ̂_u from a handful of
    // configurations is often near 0 when the truth is not). With many configurations the
    // restricted likelihood is sharp and the two meet.
    int outside = -1;
    for (int i = best + 1; i <= kGrid && outside < 0; ++i)
        if (2 * (bestValue - values[i]) > kSigmaCaution) outside = i;
    if (outside < 0) {
        logSigma = hi;
        theta = starts[kGrid];
    } else {
        double in = logSigma, out = lo + step * outside;
        std::vector<double> inTheta = theta;
        for (int i = 0; i < 12; ++i) {
            const double mid = (in + out) / 2;
            std::vector<double> probe = inTheta;
            if (2 * (bestValue - evaluate(mid, probe)) > kSigmaCaution) {
                out = mid;
            } else {
                in = mid;
                inTheta = std::move(probe);
            }
        }
        logSigma = in;
        theta = std::move(inTheta);
    }
    const double sigmaU = std::exp(logSigma);

    Matrix h, l;
    problem.information(theta, sigmaU, h);
    if (!cholesky(h, l)) {
        fit.note = "the joint model's information matrix is singular";
        return fit;
    }
    const double s = theta[problem.slope()];
    if (!(std::fabs(s) > 1e-6)) {
        fit.note = "the fitted curve is flat: P(learned) does not change along the range";
        return fit;
    }
    // Var(gᵀθ) = gᵀ H⁻¹ g for a gradient g of a derived quantity.
    auto variance = [&](const std::vector<double> &gradient) {
        const std::vector<double> solved = choleskySolve(l, gradient);
        double v = 0;
        for (size_t i = 0; i < gradient.size(); ++i) v += gradient[i] * solved[i];
        return std::max(v, 0.0);
    };
    const double logitTarget = std::log(target / (1 - target));
    fit.ok = true;
    fit.slope = s;
    std::vector<double> unitSlope(problem.size(), 0.0);
    unitSlope[problem.slope()] = 1;
    fit.slopeSe = std::sqrt(variance(unitSlope));
    fit.tau /= std::fabs(s);
    fit.tauUsed = sigmaU / std::fabs(s);
    fit.logLikelihood = problem.penalisedLikelihood(theta, sigmaU);

    // The law: c0 = (L − a0)/s, c_j = −b_j/s.
    std::vector<std::vector<double>> coefGradients;
    for (size_t j = 0; j <= k; ++j) {
        const double value = j == 0 ? (logitTarget - theta[0]) / s : -theta[j] / s;
        std::vector<double> gradient(problem.size(), 0.0);
        gradient[j] = -1 / s;
        gradient[problem.slope()] = -value / s;
        fit.coef.push_back(value);
        coefGradients.push_back(gradient);
    }
    fit.coefCovariance.assign(k + 1, std::vector<double>(k + 1, 0.0));
    for (size_t i = 0; i <= k; ++i) {
        const std::vector<double> solved = choleskySolve(l, coefGradients[i]);
        for (size_t j = 0; j <= k; ++j)
            for (size_t q = 0; q < solved.size(); ++q)
                fit.coefCovariance[i][j] += coefGradients[j][q] * solved[q];
    }
    // Profile intervals: c0 = v ⇔ a0 + v·s = L; c_j = v ⇔ b_j + v·s = 0. The crossings' are
    // looked for within the points' span on either side of them, as the separate model's are.
    const double xLow = *xs.begin(), xHigh = *xs.rbegin(), xSpan = xHigh - xLow;
    const double fitted = problem.objective(theta, sigmaU);
    const double limit = chiSquareQuantile(level, 1.0);
    for (size_t j = 0; j <= k; ++j) {
        const double se = std::sqrt(std::max(fit.coefCovariance[j][j], 0.0));
        fit.coefSe.push_back(se);
        const double reach = std::max(20 * se, 5.0);
        const ProfileEdges edges =
            profileInterval(problem, theta, sigmaU, fitted, fit.coef[j], se, fit.coef[j] - reach,
                            fit.coef[j] + reach, limit, [&](double v) {
                                std::vector<double> w(problem.size(), 0.0);
                                w[j] = 1;
                                w[problem.slope()] = v;
                                return std::pair{w, j == 0 ? logitTarget : 0.0};
                            });
        fit.coefLow.push_back(edges.low);
        fit.coefHigh.push_back(edges.high);
        fit.coefLowOpen.push_back(edges.lowOpen);
        fit.coefHighOpen.push_back(edges.highOpen);
    }
    for (double v : slopeReferences) {
        if (k == 0) break;
        std::vector<double> w(problem.size(), 0.0), start = theta;
        w[1] = 1;
        w[problem.slope()] = v;
        fit.referenceDeviance.push_back(2 * (fitted - problem.ascend(start, sigmaU, &w, 0.0)));
    }
    // Each configuration's crossing θ_c = (L − o_c)/s.
    for (size_t c = 0; c < nc; ++c) {
        double o = theta[0] + theta[problem.u(c)];
        for (size_t j = 0; j < k; ++j) o += theta[1 + j] * configurations[c].predictors[j];
        const double crossing = (logitTarget - o) / s;
        std::vector<double> gradient(problem.size(), 0.0);
        gradient[0] = -1 / s;
        for (size_t j = 0; j < k; ++j) gradient[1 + j] = -configurations[c].predictors[j] / s;
        gradient[problem.u(c)] = -1 / s;
        gradient[problem.slope()] = -crossing / s;
        const double se = std::sqrt(variance(gradient));
        fit.offset.push_back(o);
        fit.crossing.push_back(crossing);
        fit.crossingSe.push_back(se);
        // θ_c = v ⇔ a0 + Σ b_j z_cj + u_c + v·s = L.
        const ProfileEdges edges =
            profileInterval(problem, theta, sigmaU, fitted, crossing, se, xLow - xSpan,
                            xHigh + xSpan, limit, [&](double v) {
                                std::vector<double> w(problem.size(), 0.0);
                                w[0] = 1;
                                for (size_t j = 0; j < k; ++j)
                                    w[1 + j] = configurations[c].predictors[j];
                                w[problem.u(c)] = 1;
                                w[problem.slope()] = v;
                                return std::pair{w, logitTarget};
                            });
        fit.low.push_back(edges.low);
        fit.high.push_back(edges.high);
        fit.lowOpen.push_back(edges.lowOpen);
        fit.highOpen.push_back(edges.highOpen);
    }
    return fit;
}

} // namespace headlab
