// SearchResults.h — what a boundary search knows of each configuration (its points, state,
// crossing and interval, its seeds) and the law through the crossings: the report's types, which
// SearchReport.h assembles and ConfigurationState.h fills one configuration at a time. Torch-free.
#pragma once

#include "core/metrics/JointLaw.h"
#include "core/metrics/Logistic.h"
#include "core/metrics/Thresholds.h"
#include "core/session/SessionData.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace headlab {

// One seed of a paired search: its verdicts and where they put its threshold.
struct SeedSearch {
    int seed = 0;                      // replicate index: the run's seed is the session's seed + it
    std::vector<SeedVerdict> verdicts; // in the fit (the other boundary's runs left out)
    SeedBracket bracket;
    std::vector<double> probed; // every value it has a run at, search units, set-aside ones too
};

// The state of one configuration's search.
enum class SearchState {
    Searching,   // the next round has points for it
    Waiting,     // runs of its latest round have not finished
    Converged,   // the interval is narrower than interval_width
    BudgetSpent, // its runs reached the budget first
    OutOfRange,  // the crossing lies outside the searched range
    NoCrossing,  // every outcome is the same: nothing to fit
};
const char *toString(SearchState state); // "searching", "converged", ...

struct ConfigurationSearch {
    std::map<std::string, std::string> configuration; // labels of the non-searched axes
    RunConfig config;                  // resolved, at its first run (the law's values come from it)
    std::vector<BinomialPoint> points; // by value, in search units; verdicts only
    int setAside = 0; // runs left out of the fit: beyond the boundary (SearchSpec::direction)
    std::vector<BinomialPoint> setAsidePoints; // those runs, by value (drawn, not fitted)
    int runs = 0;                              // its runs, with or without a result
    int pending = 0;                           // of those, still to train
    int verdicts = 0;                          // with a learned / not learned verdict
    SearchState state = SearchState::Waiting;
    LogisticFit fit;           // in search units, of the model in use
    CrossingInterval interval; // in search units, of the model in use
    // The other model's interval, as a check: the per-configuration logistic's when the joint model
    // is in use, and the joint model's otherwise (not ok where it has no fit).
    CrossingInterval alternative;
    std::string note; // one sentence: why it stopped, or what is missing
    // Paired seeds only: each seed by replicate index, and the fit of their thresholds (its σ
    // sets the first step of a seed whose bracket is open on one side).
    std::vector<SeedSearch> seeds;
    ThresholdFit thresholds;
    // The seeds' scatter about the median seed's crossing (search units: decades on a log axis),
    // estimated by the seed model and the value its interval was computed at (JointLaw.h's τ and
    // τ used); NaN where it was not fitted.
    double seedScatter = NAN, seedScatterUsed = NAN;
    int monotoneSeeds() const;
    bool stopped() const;
};

// The law fitted across the configurations whose interval is closed.
struct LawFit {
    bool ok = false;
    std::string model = "separate"; // "separate": through the crossings; "joint": JointLaw.h
    std::string x;                  // the axis of the exponent (head_dim: m_H)
    std::vector<std::string> also;  // further axes, each with its own exponent
    // Further axes the law was asked for and left out: over the configurations it is fitted to,
    // their log10 is a combination of x's and the kept axes' (one width: heads follows from
    // head_dim), so no exponent of theirs can be told apart (separableAxes, SearchReport.h).
    std::vector<std::string> leftOut;
    int configurations = 0;
    bool provisional = false; // some of them are still searching
    double level = 0.95;
    // log10 η* = log10 C − α log10 x − Σ β_k log10 also_k
    double alpha = 0, alphaLow = 0, alphaHigh = 0;
    double log10C = 0, log10CLow = 0, log10CHigh = 0;
    std::vector<double> beta, betaLow, betaHigh;
    // The correlation of α's estimate with each β_k's: how far the data tell the exponents apart
    // (near −1 or 1: only a combination of them is measured).
    std::vector<double> correlation;
    double chi2 = 0;
    int dof = 0;
    double scale = 1; // the errors were multiplied by sqrt(scale) for the law's misfit
    // The joint model's scatter of the configurations' log10 crossings about the law (decades),
    // which it estimates instead of scaling; NaN for the separate model. Its dof is the number of
    // the law's slopes, and its χ² the Wald test of the one slope being 0 (NaN with more than one).
    double tau = NAN;
    // For a band around the line (a law of one axis): the weighted centre of the points, where the
    // line's error is smallest and independent of α's, and those two errors.
    double centerX = 0, centerY = 0, centerSe = 0, alphaSe = 0;
    // The line's 95 % band at log10 x (NaN for a law of several axes).
    double bandHalfWidth(double log10x) const;
    // How well a fixed exponent describes the data: the intercept refitted, χ², dof, p.
    struct Reference {
        double alpha = 0, log10C = 0, chi2 = 0, p = 0;
        int dof = 0;
        bool inInterval = false;
    };
    std::vector<Reference> references; // α = ½, ¾, 1
    std::string note;                  // why there is no fit
    // What a prediction for a configuration not searched needs (predictCrossing): the
    // coefficients' covariance (of c0, c1, ...: log10 C, −α, −β_k), the scatter of a
    // configuration's crossing about the law (decades) it adds, and the span of each law axis
    // (its least and greatest value; x, then also) over the configurations fitted. The joint
    // model's scatter is the τ its intervals are computed at (JointLaw.h's τ used: the upper end
    // of σ_u's interval); the
    // separate model's is the upper end (one-sided 84 %) of the Q-profile interval of the
    // variance between configurations beyond their intervals, with the covariance of the refit
    // that weighs each crossing by 1/(σ² + τ²) (a random-effects meta-regression; Viechtbauer
    // 2007 on the Q-profile).
    std::vector<std::vector<double>> predictionCovariance;
    double scatter = NAN;
    std::vector<double> axisLow, axisHigh;
    // The misfit, the separate model's: each configuration's crossing off the law, in decades and
    // in its own σ (from its interval), the largest |σ| first.
    struct Residual {
        std::map<std::string, std::string> labels;
        double decades = 0, sigmas = 0;
    };
    std::vector<Residual> residuals;
    // The further axes asked for, fitted or left out: what tells the law's groups apart
    // (lawGroupOf) is every other label.
    std::vector<std::string> askedAlso() const
    {
        std::vector<std::string> all = also;
        all.insert(all.end(), leftOut.begin(), leftOut.end());
        return all;
    }
    // The law's axes: x, then also.
    std::vector<std::string> axes() const
    {
        std::vector<std::string> all = {x};
        all.insert(all.end(), also.begin(), also.end());
        return all;
    }
    // The law's log10 crossing where its axes (x, then also) have these log10 values.
    double log10At(const std::vector<double> &log10Axes) const
    {
        double y = log10C - alpha * log10Axes.at(0);
        for (size_t k = 0; k < beta.size(); ++k) y -= beta[k] * log10Axes.at(k + 1);
        return y;
    }
};

// The bend (issue 77): the law with curvature in log10 x beside the power law,
//   log10 η* = log10 C − α log10 x − Σ β_k log10 also_k + γ (log10 x − x0)²,
// x0 the crossings' weighted mean of log10 x (so that α is the slope there), fitted through the
// crossings. γ = 0 is tested by Δχ² (the power law's χ² less the bent one's): against χ² with 1
// dof where the bent fit leaves no misfit (χ²/dof ≤ 1), else divided by its χ²/dof against F(1,
// dof); the bent law is chosen when p < 1 − level. α's local value at each end of x's span says
// how far it bends there.
struct LawBend {
    bool ok = false;
    std::string note; // why there is none
    std::string x;
    std::vector<std::string> also; // the further axes, as the power law's
    double level = 0.95;
    double x0 = 0;     // log10 of x's centre
    double log10C = 0; // the bent law's intercept (at log10 x = 0, the further axes at 0)
    double gamma = 0, gammaLow = 0, gammaHigh = 0;
    double alpha = 0;                       // the slope at x0
    std::vector<double> beta;               // each further axis's exponent in the bent law
    double alphaAtLow = 0, alphaAtHigh = 0; // −d log10 η*/d log10 x at the span's ends
    double xLow = 0, xHigh = 0;             // the span of x
    double chi2 = 0;                        // the bent fit's
    int dof = 0;
    double statistic = 0, p = NAN;
    bool chosen = false;
    // What a prediction from the bent law needs, as LawFit's: the covariance of (log10 C, −α,
    // −β..., γ) of the refit with the scatter between configurations (Q-profile), that scatter,
    // and each law axis's span.
    std::vector<std::vector<double>> predictionCovariance;
    double scatter = NAN;
    std::vector<double> axisLow, axisHigh;
    std::vector<std::string> axes() const
    {
        std::vector<std::string> all = {x};
        all.insert(all.end(), also.begin(), also.end());
        return all;
    }
    // The bent law's log10 crossing where its axes (x, then also) have these log10 values.
    double log10At(const std::vector<double> &log10Axes) const
    {
        const double dx = log10Axes.at(0) - x0;
        double y = log10C - alpha * log10Axes.at(0) + gamma * dx * dx;
        for (size_t k = 0; k < beta.size(); ++k) y -= beta[k] * log10Axes.at(k + 1);
        return y;
    }
};

// η* predicted by a law for one configuration, in log10 (search units on a log axis).
struct CrossingPrediction {
    bool ok = false;
    std::string note; // why there is none
    double estimate = 0, low = 0, high = 0;
    double lawSe = 0;                // the law's own uncertainty there (decades)
    double scatter = 0;              // the scatter between configurations it adds (decades)
    std::vector<std::string> beyond; // the law axes whose value lies outside the fitted span
    std::string law = "power";       // the law it comes from: "power" or "bent" (LawBend)
};

// Configurations that differ in an axis other than the model's shape and the law's own axes (a
// stabilizer, the QK rule, the logit scale, ...) fall into groups, each with its law.
struct LawGroup {
    std::map<std::string, std::string> labels; // the group's values of those axes
    LawFit law;
};

// Width and head count as separate exponents: log10 η* = log10 C − a log10 m + b log10 n_H, the
// law of m_H and n_H (log10 C − α log10 m_H − β log10 n_H) in other axes: a = α, b = α − β.
// The paper's η·sqrt(m_H) is (a, b) = (½, ½); an Adam update limit in width (μP) is (1, 0).
// It is the law over x = d_model and also = [heads] (b = −β_heads of that fit), by the model in
// use, where the configurations vary in both and the law's own axes are head_dim (and heads).
struct WidthAndHeads {
    bool ok = false;
    std::string note; // why there is none
    LawFit law;       // over d_model and heads
    double a() const { return law.alpha; }
    double aLow() const { return law.alphaLow; }
    double aHigh() const { return law.alphaHigh; }
    double b() const { return law.beta.empty() ? NAN : -law.beta[0]; }
    double bLow() const { return law.beta.empty() ? NAN : -law.betaHigh[0]; }
    double bHigh() const { return law.beta.empty() ? NAN : -law.betaLow[0]; }
    // corr(a, b) = −corr(α_m, β_heads) of that fit.
    double correlation() const { return law.correlation.empty() ? NAN : -law.correlation[0]; }
};

struct SearchReport {
    std::string axis;
    bool logScale = true;
    std::vector<ConfigurationSearch> configurations;
    int rounds = 0; // planned so far
    int runs = 0, pending = 0;
    bool finished = false;            // every configuration has stopped
    std::string model = "separate";   // the spec's model
    std::string seeds = "replicates"; // the spec's seed plan: replicates, fresh or paired
    LawFit law;                       // over every configuration, by the model in use
    LawFit alternative;               // the same by the other model, as a check
    std::vector<LawGroup> groups;     // per group, when there are two or more (else empty)
    WidthAndHeads widthAndHeads;      // the separate model's always, the joint model's with `check`
    LawBend bend;                     // of the law's axes, through the crossings
};

} // namespace headlab
