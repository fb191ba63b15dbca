// Logistic.h — P(learned | x) as a logistic curve fitted to replicated yes/no outcomes, where it
// crosses a target probability with a profile-likelihood interval, and straight-line laws fitted
// through such crossings (log η* = log C − α log m_H).
//
// The fit is Firth's penalised maximum likelihood (Firth 1993; Heinze & Schemper 2002): the
// log-likelihood plus ½ log det I(β). It stays finite under complete separation — every run below
// some x learned, every run above failed — which is the usual state of a boundary search after a
// few rounds, where the plain maximum-likelihood slope runs off to infinity. The interval of the
// crossing is the profile of that penalised likelihood (the set of crossings whose deviance from
// the best fit is below the χ²₁ quantile), as logistf reports for Firth fits: unlike a Wald
// interval it is asymmetric where the data are, and open on a side the data do not close.
// Torch-free.
#pragma once

#include <utility>
#include <vector>

namespace headlab {

// Outcomes at one value of the searched axis: `successes` of `trials` replicates learned.
struct BinomialPoint {
    double x = 0; // in the search's units (log10 of η for a log-scaled axis)
    int successes = 0;
    int trials = 0;
};

// logit P = a + b·x.
struct LogisticFit {
    bool ok = false; // false: fewer than two distinct x, or no trial at all
    double a = 0, b = 0;
    double penalizedLogLik = 0;
    double probability(double x) const;
    // The x where P = target ((logit target − a) / b); NaN for a flat curve.
    double crossing(double target) const;
};

LogisticFit fitLogistic(const std::vector<BinomialPoint> &points);

// The penalised log-likelihood of (a, b): what the fit maximises.
double penalizedLogLikelihood(const std::vector<BinomialPoint> &points, double a, double b);

struct CrossingInterval {
    bool ok = false; // false: no fit, or a flat curve that never crosses the target
    double estimate = 0, low = 0, high = 0;
    bool lowOpen = false, highOpen = false; // the data do not bound that side within the search
    double width() const { return high - low; }
};

// The crossing of `target` with its `level` profile interval. The interval is looked for within
// [xMin − span, xMax + span], span = xMax − xMin; a side not closed by then is open (low = xMin −
// span or high = xMax + span, and the flag set).
CrossingInterval crossingInterval(const std::vector<BinomialPoint> &points, double target,
                                  double level, double xMin, double xMax);
// The same, with the points' fit (fitLogistic(points)) already at hand.
CrossingInterval crossingInterval(const std::vector<BinomialPoint> &points, const LogisticFit &fit,
                                  double target, double level, double xMin, double xMax);

// The quantile of the χ² distribution with `dof` degrees of freedom at probability p, and its
// upper tail Q(χ² ≥ x).
double chiSquareQuantile(double p, double dof);
double chiSquareSurvival(double x, double dof);
double normalQuantile(double p);

// y_i = c0 + Σ_k c_k · x_ik by weighted least squares with known standard errors σ_i (the
// crossings' interval half-widths / z). The coefficients' covariance is (XᵀWX)⁻¹, scaled by
// χ²/dof when that exceeds 1 (the points scatter more than their errors say: the law misfits).
struct LinearFit {
    bool ok = false;
    std::vector<double> coef, se;                // c0, c1, ...
    std::vector<std::vector<double>> covariance; // of c0, c1, ..., scaled as se
    double chi2 = 0;
    int dof = 0;
    double scale = 1; // the factor the covariance was multiplied by (≥ 1)
};
LinearFit fitLinear(const std::vector<std::vector<double>> &predictors, // [i][k]
                    const std::vector<double> &y, const std::vector<double> &sigma);

// The 95 % Wilson score interval of `successes` in `n` (Wilson 1927): inside [0, 1], and not of
// width 0 at 0 or n, unlike the normal approximation; [0, 1] for n = 0. The figures' learned
// fractions (the app's and the report's) carry it.
std::pair<double, double> wilsonInterval(int successes, int n);

} // namespace headlab
