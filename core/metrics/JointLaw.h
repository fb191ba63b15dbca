// JointLaw.h — one model for the boundary of every configuration of a search at once: P(learned)
// a logistic curve in the searched value with one slope shared by all configurations, and each
// configuration's crossing on the law (log10 η* = c0 + Σ c_k log10 z_k) plus its own deviation,
// drawn from a normal distribution whose width τ (decades) the data estimate.
//
// Why: a per-configuration logistic spends most of a configuration's runs on its own slope, and a
// law fitted through the crossings afterwards knows nothing of how they were measured. Sharing
// the slope and putting the law inside the likelihood lets a configuration with few runs borrow
// from the others; τ is the law's misfit, measured instead of assumed (issue 53; Prins 2013 on
// shared slopes; a generalised linear mixed model, Breslow & Clayton 1993).
//
// The model, for run i of configuration c at x_i (search units: log10 η on a log axis):
//   logit P(learned) = a0 + Σ_k b_k z_ck + u_c + s · x_i,      u_c ~ N(0, σ_u²),
// a logistic regression with a ridge on u, fitted with Firth's penalty (½ log det I, as the
// separate model's fit, Logistic.h) so that it stays finite and its profiles honest when every
// configuration's outcomes are separated.
// The crossing of `target` is θ_c = (logit target − a0 − Σ b_k z_ck − u_c) / s; the law's
// coefficients are c0 = (logit target − a0) / s, c_k = −b_k / s, and τ = σ_u / |s|.
// σ̂_u maximises the Laplace approximation of the likelihood with u, a0 and b integrated out (the
// restricted likelihood, less biased than the plain one with few configurations). The fit and
// its intervals use the upper end of σ_u's interval on that likelihood (deviance 1, one-sided
// ~84 %) instead, so that a scatter a handful of configurations cannot pin down widens their
// crossings rather than pulling them onto the law: with σ̂_u the simulated searches' crossings
// held the truth 84 % of the time where the configurations scatter 0.1 decades about the law. A weak normal
// prior on s (sd 50 logits per unit of x) is a further guard. The intervals are profile-likelihood
// intervals of the penalised likelihood at that σ_u (each quantity fixed by a linear constraint,
// the rest maximised), asymmetric where the data are; θ_c's holds u_c's uncertainty. The standard
// errors are the delta method's on the penalised fit's covariance (for the law's band).
// Torch-free.
#pragma once

#include "core/metrics/Logistic.h"

#include <string>
#include <vector>

namespace headlab {

struct JointConfiguration {
    std::vector<BinomialPoint> points; // verdicts by value, in search units
    std::vector<double> predictors;    // log10 of each law axis (empty: no law, shared slope only)
};

struct JointFit {
    bool ok = false;
    std::string note; // why there is no fit
    double level = 0.95;
    double slope = 0, slopeSe = 0; // s: logits per unit of x
    double tau = 0;     // the configurations' scatter about the law, in units of x (its estimate)
    double tauUsed = 0; // the scatter the fit and its intervals are computed at (≥ tau)
    std::vector<double> coef, coefSe, coefLow, coefHigh; // c0, c1, ...: the law
    std::vector<bool> coefLowOpen, coefHighOpen;         // a side the profile does not close
    std::vector<double> crossing, crossingSe, low, high; // θ_c and its interval, per configuration
    std::vector<bool> lowOpen,
        highOpen;               // a side the profile does not close within the points' span
                                // on either side of them
    std::vector<double> offset; // a0 + Σ b z_c + u_c: the curve's logit at x = 0
    std::vector<std::vector<double>> coefCovariance; // of c0, c1, ...
    double logLikelihood = 0;              // of the outcomes at the fit, less the priors' penalties
    int iterations = 0;                    // Newton steps, over every σ_u tried
    std::vector<double> referenceDeviance; // per slopeReferences value
    LogisticFit curve(size_t c) const { return {ok, offset[c], slope, 0}; }
};

// Fits the model at `target` with `level` intervals. Needs two configurations with a verdict and
// two distinct x; with predictors, as many configurations with distinct predictor rows as the law
// has coefficients plus one. For each of `slopeReferences` (values of c1, the law's first slope),
// the profile deviance of the fit with c1 fixed there (a likelihood-ratio χ²₁) is in
// `referenceDeviance`.
JointFit fitJointLaw(const std::vector<JointConfiguration> &configurations, double target,
                     double level, const std::vector<double> &slopeReferences = {});

} // namespace headlab
