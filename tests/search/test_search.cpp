// test_search.cpp — the boundary search as a user relies on it: its 95 % intervals cover the true
// crossing and its law the true exponent when the trainer is a known logistic, a killed search
// resumes to the same result, and a tiny CPU model's crossing agrees with a dense grid.
#include "core/config/Yaml.h"
#include "core/metrics/Edge.h"
#include "core/metrics/JointLaw.h"
#include "core/metrics/Logistic.h"
#include "core/metrics/Metrics.h"
#include "core/session/Session.h"
#include "core/session/SessionStore.h"
#include "core/session/search/SearchPlanner.h"
#include "core/session/search/SearchReport.h"
#include "core/session/search/SearchSummary.h"
#include "tests/TinyRuns.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <random>
#include <set>

using namespace headlab;

namespace {

// A trainer whose P(learned | η) is σ(−slope · (log10 η − log10 η*)), η* = C · m_H^−α.
struct SimulatedTrainer {
    double log10C = -2.0, alpha = 0.5, slope = 6.0;
    double slowBelow = 0; // η below this never learns (too small a step for the steps given)
    uint64_t seed = 0;
    double alphaWithQkNorm = NAN; // given: runs with qk_norm on follow this exponent instead
    // Each configuration's crossing off the law by its own amount, drawn once per configuration
    // (per head dimension) from N(0, scatter²) decades: the law's misfit real boundaries show.
    double scatter = 0;
    // Each seed (initialisation and data order) its own crossing, off the configuration's by
    // N(0, seedSpread²) decades: seeds that are not exchangeable. With a steep `slope` a seed's
    // outcome is then nearly monotone in η, a threshold of its own.
    double seedSpread = 0;
    // Given: the boundary is log10 η* = log10C − widthExponent log10 m + headsExponent log10 n_H
    // (issue 77's two exponents) instead of the law of m_H alone.
    double widthExponent = NAN, headsExponent = NAN;
    // Given: the law bends, + curvature (log10 m_H − log10 24)² (issue 77's bend).
    double curvature = 0;
    double seedOffset(double headDim, uint64_t runSeed) const
    {
        if (seedSpread == 0) return 0;
        std::seed_seq seq{uint64_t(seed), uint64_t(0x5eed), uint64_t(std::llround(headDim)),
                          runSeed};
        std::mt19937_64 rng(seq);
        return std::normal_distribution<double>(0, seedSpread)(rng);
    }
    double offset(double headDim) const
    {
        if (scatter == 0) return 0;
        std::seed_seq seq{uint64_t(seed), uint64_t(0x5ca7), uint64_t(std::llround(headDim))};
        std::mt19937_64 rng(seq);
        return std::normal_distribution<double>(0, scatter)(rng);
    }
    double trueCrossing(double headDim, bool qkNorm = false) const
    {
        const double straight =
            log10C + offset(headDim) -
            (qkNorm && std::isfinite(alphaWithQkNorm) ? alphaWithQkNorm : alpha) *
                std::log10(headDim);
        if (curvature == 0) return straight;
        const double d = std::log10(headDim) - std::log10(24.0);
        return straight + curvature * d * d;
    }
    bool learned(const RunConfig &config) const
    {
        if (config.lr < slowBelow) return false;
        const double headDim = double(config.model.headDimOfLayer(0));
        const bool qkNorm = config.stabilizers.qkNorm != QkNorm::Off;
        const bool twoExponents = std::isfinite(widthExponent);
        const double crossing =
            (twoExponents ? log10C - widthExponent * std::log10(double(config.model.dModel)) +
                                headsExponent * std::log10(double(config.model.heads.front()))
                          : trueCrossing(headDim, qkNorm)) +
            seedOffset(headDim, config.initSeed);
        const double p = 1 / (1 + std::exp(slope * (std::log10(config.lr) - crossing)));
        // One draw per run, from the run's identity (configuration, η, replicate seed).
        std::vector<uint64_t> identity{
            uint64_t(seed), uint64_t(config.model.heads.front()), uint64_t(qkNorm),
            uint64_t(std::llround(std::log10(config.lr) * 1e9)), config.initSeed};
        if (twoExponents || curvature != 0) // widths differ
            identity.push_back(uint64_t(config.model.dModel));
        std::seed_seq seq(identity.begin(), identity.end());
        std::mt19937_64 rng(seq);
        return std::uniform_real_distribution<double>(0, 1)(rng) < p;
    }
    // Gives every run without a result its outcome; returns how many.
    int train(Session &session, int limit = 1 << 30) const
    {
        int trained = 0;
        for (auto &run : session.runs) {
            if (isFinished(run.result.status)) continue;
            if (trained == limit) break;
            run.result.status = RunStatus::Done;
            run.result.metrics[metric::kLeftLn10Plateau] = learned(run.config) ? 1.0 : 0.0;
            ++trained;
        }
        return trained;
    }
};

// The paper's width m = 96 with 1 … 12 heads: m_H from 96 down to 8.
Session searchSession()
{
    Session session;
    session.base = testing::tinyAdditionRun(96, {1}, 10, 1e-3);
    session.axes.push_back({"heads", {}});
    for (int h : {1, 2, 3, 6, 12}) {
        AxisValue v;
        v.number = h;
        session.axes.back().values.push_back(v);
    }
    SearchSpec spec;
    spec.low = 1e-4;
    spec.high = 1e-1;
    // The first seed at every η: the design docs/SEARCH.md's tables measured (replicates: 1).
    spec.seedPlan = SearchSpec::SeedPlan::Replicates;
    session.search = spec;
    return session;
}

// A d_model axis of these widths added to a search session's sweep.
void sweepWidths(Session &session, std::initializer_list<int> widths)
{
    session.axes.push_back({"d_model", {}});
    for (int m : widths) {
        AxisValue v;
        v.number = m;
        session.axes.back().values.push_back(v);
    }
}

// Over a finished search's stopped configurations: how many intervals, how many hold the true
// crossing, and their summed width.
void countCoverage(const SearchReport &report, const SimulatedTrainer &trainer, int *intervals,
                   int *covered, double *widthSum)
{
    for (const auto &c : report.configurations) {
        if (c.state != SearchState::Converged && c.state != SearchState::BudgetSpent) continue;
        ++*intervals;
        *widthSum += c.interval.width();
        const double truth = trainer.trueCrossing(dimensionNumber(c.config, "head_dim"));
        *covered += c.interval.low <= truth && truth <= c.interval.high;
    }
}

// A test's rows: with the separate model and with the joint one (its column "joint").
void bothModels()
{
    QTest::addColumn<bool>("joint");
    QTest::newRow("separate model") << false;
    QTest::newRow("joint model") << true;
}

// Runs the whole search against `trainer`; returns the rounds it took.
int runSearch(Session &session, const SimulatedTrainer &trainer)
{
    int rounds = 0;
    while (planSearchRound(session) > 0) {
        trainer.train(session);
        ++rounds;
    }
    return rounds;
}

} // namespace

class TestSearch : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void anIntervalsEdgeTakesAFewFits();
    void theFitFindsAKnownCurve();
    void theIntervalsCoverTheTrueCrossing_data();
    void theIntervalsCoverTheTrueCrossing();
    void theJointModelCoversTheTruthWithFewerRuns_data();
    void theJointModelCoversTheTruthWithFewerRuns();
    void theJointModelAgreesWithAnIndependentFit();
    void lawWidthSearchesOnUntilTheLawIsPrecise();
    void aSeedsThresholdIsBracketed();
    void theThresholdsFitIsStudentsTForExactThresholds();
    void pairedSeedsCoverThePopulationsCrossing_data();
    void pairedSeedsCoverThePopulationsCrossing();
    void aSecondBoundaryAtSmallEtaIsLeftOut();
    void eachStabilizerGetsItsOwnLaw();
    void widthAndHeadsAreSeparateExponents_data();
    void widthAndHeadsAreSeparateExponents();
    void anAxisThatFollowsFromTheOthersIsLeftOut_data();
    void anAxisThatFollowsFromTheOthersIsLeftOut();
    void aPredictionIntervalCoversTheTruthAtItsRate_data();
    void aPredictionIntervalCoversTheTruthAtItsRate();
    void aBentLawIsChosenOverThePowerLaw();
    void aBentBoundaryIsPredictedByTheChosenLaw();
    void aSearchStartsWhereThePredictionSays();
    void aWrongPredictionIsSteppedOutOf();
    void aSearchKilledMidRoundResumesToTheSameResult();
    void theSessionFileRecordsTheRounds();
    void aReportsNumbersArePinnedToItsMethod();
    void aTinyModelsCrossingAgreesWithADenseGrid();
    void theCliResumesAKilledSearch();
};

// Each evaluation of an interval's edge is a fit of its own: the secant finds the edge of a
// profile's √deviance − √limit to the tolerance in a handful of them, where bisection of the same
// bracket (0.4 to 1e-6) takes 19; a failed fit (infinite) still counts as outside; and an edge
// already known to the tolerance costs nothing.
void TestSearch::anIntervalsEdgeTakesAFewFits()
{
    int calls = 0;
    // A profile deviance 3.84 at x = 0.7, steeper than a parabola outside.
    auto excess = [&](double x) {
        ++calls;
        return std::sqrt(3.84 * std::pow(x / 0.7, 2) * (1 + 0.3 * (x - 0.7))) - std::sqrt(3.84);
    };
    double edge = edgeBetween(excess, 0.5, excess(0.5), 0.9, excess(0.9), 1e-6);
    QVERIFY2(std::fabs(edge - 0.7) < 1e-6, qPrintable(QString::number(edge, 'g', 12)));
    QVERIFY2(calls - 2 <= 8, qPrintable(QString::number(calls)));
    // From the other side (an interval's low edge): inside above, outside below.
    calls = 0;
    auto mirrored = [&](double x) { return excess(-x); };
    edge = edgeBetween(mirrored, -0.5, mirrored(-0.5), -0.9, mirrored(-0.9), 1e-6);
    QVERIFY2(std::fabs(edge + 0.7) < 1e-6, qPrintable(QString::number(edge, 'g', 12)));
    // A fit that fails beyond 0.8 reads as outside at infinity.
    auto failing = [&](double x) { return x > 0.8 ? INFINITY : excess(x); };
    edge = edgeBetween(failing, 0.5, failing(0.5), 1.0, failing(1.0), 1e-6);
    QVERIFY2(std::fabs(edge - 0.7) < 1e-6, qPrintable(QString::number(edge, 'g', 12)));
    calls = 0;
    QCOMPARE(edgeBetween(excess, 0.7, -1e-9, 0.7 + 1e-7, 1e-9, 1e-6), 0.7 + 5e-8);
    QCOMPARE(calls, 0);
}

// Many replicates at many points: the fit recovers the curve, and the crossing's interval is
// narrow and holds the truth.
void TestSearch::theFitFindsAKnownCurve()
{
    std::mt19937_64 rng(1);
    std::vector<BinomialPoint> points;
    const double a = 2.0, b = -4.0; // crossing ½ at x = 0.5
    for (int i = 0; i <= 20; ++i) {
        BinomialPoint p;
        p.x = -1 + 0.15 * i;
        p.trials = 200;
        const double prob = 1 / (1 + std::exp(-(a + b * p.x)));
        std::binomial_distribution<int> draw(p.trials, prob);
        p.successes = draw(rng);
        points.push_back(p);
    }
    const LogisticFit fit = fitLogistic(points);
    QVERIFY(fit.ok);
    QVERIFY2(std::fabs(fit.b - b) < 0.4, qPrintable(QString::number(fit.b)));
    const CrossingInterval interval = crossingInterval(points, 0.5, 0.95, -1, 2);
    QVERIFY(interval.ok && !interval.lowOpen && !interval.highOpen);
    QVERIFY(interval.low < 0.5 && 0.5 < interval.high);
    QVERIFY2(interval.width() < 0.1, qPrintable(QString::number(interval.width())));
    QCOMPARE(chiSquareQuantile(0.95, 1), 3.841458820694124);
}

void TestSearch::theIntervalsCoverTheTrueCrossing_data()
{
    QTest::addColumn<double>("slope");
    QTest::newRow("a gradual boundary (P 0.9 → 0.1 over 0.7 decades)") << 6.0;
    QTest::newRow("a sharp boundary (over 0.15 decades)") << 30.0;
}

// Over many seeded searches of five configurations whose crossings follow η* = C m_H^−½, the 95 %
// intervals of η* and of α hold the true values at least 90 % of the time.
void TestSearch::theIntervalsCoverTheTrueCrossing()
{
    QFETCH(double, slope);
    constexpr int kSearches = 200;
    int intervals = 0, covered = 0, lawFits = 0, alphaCovered = 0, runs = 0, rounds = 0;
    double widthSum = 0;
    for (int s = 0; s < kSearches; ++s) {
        const SimulatedTrainer trainer{.slope = slope, .seed = uint64_t(s)};
        Session session = searchSession();
        rounds += runSearch(session, trainer);
        const SearchReport report = searchReport(session);
        QVERIFY(report.finished);
        runs += report.runs;
        countCoverage(report, trainer, &intervals, &covered, &widthSum);
        if (report.law.ok) {
            ++lawFits;
            alphaCovered +=
                report.law.alphaLow <= trainer.alpha && trainer.alpha <= report.law.alphaHigh;
        }
    }
    const double coverage = double(covered) / intervals;
    const double alphaCoverage = double(alphaCovered) / lawFits;
    qInfo("%d searches: %d intervals, η* coverage %.3f (mean width %.3f decades), α coverage %.3f "
          "of %d fits; %.1f runs per configuration, %.1f rounds per search",
          kSearches, intervals, coverage, widthSum / intervals, alphaCoverage, lawFits,
          double(runs) / (kSearches * 5), double(rounds) / kSearches);
    QVERIFY(intervals >= kSearches * 5 * 9 / 10);
    QVERIFY2(coverage >= 0.9, qPrintable(QString::number(coverage)));
    QVERIFY(lawFits >= kSearches * 9 / 10);
    QVERIFY2(alphaCoverage >= 0.9, qPrintable(QString::number(alphaCoverage)));
}

void TestSearch::theJointModelCoversTheTruthWithFewerRuns_data()
{
    QTest::addColumn<double>("slope");
    QTest::addColumn<double>("scatter");
    QTest::newRow("a gradual boundary on the law") << 6.0 << 0.0;
    QTest::newRow("a sharp boundary on the law") << 30.0 << 0.0;
    QTest::newRow("a gradual boundary, crossings 0.1 decades off the law") << 6.0 << 0.1;
}

// `model: joint` over the same seeded searches as the separate model: its 95 % intervals of each
// configuration's η* and of α hold the truth at least 90 % of the time, with the scatter about
// the law estimated (τ) where the crossings leave it; on the law it needs fewer runs than the
// separate model.
void TestSearch::theJointModelCoversTheTruthWithFewerRuns()
{
    QFETCH(double, slope);
    QFETCH(double, scatter);
    constexpr int kSearches = 60;
    int intervals = 0, covered = 0, lawFits = 0, alphaCovered = 0;
    int jointRuns = 0, separateRuns = 0;
    double widthSum = 0, tauSum = 0;
    for (int s = 0; s < kSearches; ++s) {
        const SimulatedTrainer trainer{
            .slope = slope, .seed = uint64_t(1000 + s), .scatter = scatter};
        Session separate = searchSession();
        runSearch(separate, trainer);
        separateRuns += searchReport(separate).runs;
        Session session = searchSession();
        session.search->model = SearchSpec::Model::Joint;
        runSearch(session, trainer);
        const SearchReport report = searchReport(session);
        QVERIFY(report.finished);
        QCOMPARE(report.model, std::string("joint"));
        jointRuns += report.runs;
        countCoverage(report, trainer, &intervals, &covered, &widthSum);
        if (report.law.ok) {
            QCOMPARE(report.law.model, std::string("joint"));
            QVERIFY(report.alternative.model == "separate");
            ++lawFits;
            tauSum += report.law.tau;
            alphaCovered +=
                report.law.alphaLow <= trainer.alpha && trainer.alpha <= report.law.alphaHigh;
        }
    }
    const double coverage = double(covered) / intervals;
    const double alphaCoverage = double(alphaCovered) / lawFits;
    qInfo("%d searches: η* coverage %.3f of %d (mean width %.3f decades), α coverage %.3f of %d "
          "fits, mean τ %.3f; %.1f runs per configuration, against %.1f with the separate model",
          kSearches, coverage, intervals, widthSum / intervals, alphaCoverage, lawFits,
          tauSum / lawFits, double(jointRuns) / (kSearches * 5),
          double(separateRuns) / (kSearches * 5));
    QVERIFY(intervals >= kSearches * 5 * 9 / 10);
    QVERIFY2(coverage >= 0.9, qPrintable(QString::number(coverage)));
    QVERIFY(lawFits >= kSearches * 9 / 10);
    QVERIFY2(alphaCoverage >= 0.9, qPrintable(QString::number(alphaCoverage)));
    if (scatter == 0) QVERIFY2(jointRuns < separateRuns, qPrintable(QString::number(jointRuns)));
}

// law_width (joint model): configurations whose own interval is narrow enough search on while
// the law's α interval is wider than asked. On the simulated trainer (gradual boundary, s = 6, on
// the law; the five m_H of m = 96; interval_width 0.4, budget 40), against the same searches
// without it: every search ends with α's interval narrower than law_width or with no
// configuration stopped by its own interval (each spent its budget or is out of range); the
// searches spend more runs, and α's mean width is narrower. A law that cannot be fitted changes
// nothing. HEADLAB_LAW_SEARCHES, HEADLAB_LAW_WIDTH and
// HEADLAB_INTERVAL_WIDTH change the number of searches (12), law_width (0.6) and interval_width
// (0.4): docs/SEARCH.md's table ran 40 searches at several widths.
void TestSearch::lawWidthSearchesOnUntilTheLawIsPrecise()
{
    auto setting = [](const char *name, double fallback) {
        const char *text = std::getenv(name);
        return text ? std::atof(text) : fallback;
    };
    const int searches = std::max(1, int(setting("HEADLAB_LAW_SEARCHES", 12)));
    const double kLawWidth = setting("HEADLAB_LAW_WIDTH", 0.6);
    const double kIntervalWidth = setting("HEADLAB_INTERVAL_WIDTH", 0.4);
    int plainRuns = 0, lawRuns = 0, settled = 0;
    double plainWidth = 0, lawWidth = 0;
    for (int s = 0; s < searches; ++s) {
        const SimulatedTrainer trainer{.slope = 6.0, .seed = uint64_t(3000 + s)};
        auto search = [&](double width) {
            Session session = searchSession();
            session.search->model = SearchSpec::Model::Joint;
            session.search->intervalWidth = kIntervalWidth;
            session.search->lawWidth = width;
            runSearch(session, trainer);
            return searchReport(session);
        };
        const SearchReport plain = search(0), law = search(kLawWidth);
        QVERIFY(plain.finished && law.finished);
        QVERIFY(plain.law.ok && law.law.ok);
        const double width = law.law.alphaHigh - law.law.alphaLow;
        if (width <= kLawWidth) {
            ++settled;
        } else {
            for (const auto &c : law.configurations) {
                QVERIFY2(c.state != SearchState::Converged, c.note.c_str());
                if (c.state == SearchState::BudgetSpent)
                    QVERIFY2(c.note.find("law_width") != std::string::npos ||
                                 c.note.find("budget") != std::string::npos,
                             c.note.c_str());
            }
        }
        plainRuns += plain.runs;
        lawRuns += law.runs;
        plainWidth += plain.law.alphaHigh - plain.law.alphaLow;
        lawWidth += width;
    }
    qInfo("%d searches, interval_width %.2f: alone %.1f runs per configuration, α %.3f wide; with "
          "law_width %.2f %.1f runs, α %.3f wide, %d of %d within law_width",
          searches, kIntervalWidth, double(plainRuns) / (searches * 5), plainWidth / searches,
          kLawWidth, double(lawRuns) / (searches * 5), lawWidth / searches, settled, searches);
    // A law that cannot be fitted (every configuration has d_model 96) is not searched for: the
    // search spends what it spends without law_width.
    const SimulatedTrainer trainer{.slope = 6.0, .seed = 3000};
    auto alongWidth = [&](double width) {
        Session session = searchSession();
        session.search->model = SearchSpec::Model::Joint;
        session.search->intervalWidth = 0.4;
        session.search->lawX = "d_model";
        session.search->lawWidth = width;
        runSearch(session, trainer);
        return searchReport(session);
    };
    const SearchReport noLaw = alongWidth(0.6);
    QVERIFY(noLaw.finished);
    QVERIFY(!noLaw.law.ok);
    QCOMPARE(noLaw.runs, alongWidth(0).runs);
    // More runs in one configuration move the joint fit, which can stop another sooner: a single
    // search may spend fewer runs, the searches together do not.
    QVERIFY2(lawRuns > plainRuns, qPrintable(QString("%1 <= %2").arg(lawRuns).arg(plainRuns)));
    QVERIFY2(lawWidth < plainWidth, qPrintable(QString::number(lawWidth / searches)));
}

// The joint fit against an independent one: the same objective (the penalised likelihood plus
// Firth's ½ log det I, at the fit's σ_u) written here again, its determinant by elimination, and
// maximised by gradient ascent on central differences with backtracking. The two agree on α and
// on every crossing to 1e-3.
void TestSearch::theJointModelAgreesWithAnIndependentFit()
{
    // Five configurations, log10 m_H 0 … 2, crossings on α = 0.8 with offsets, 8 points each.
    std::vector<JointConfiguration> data;
    std::mt19937_64 rng(7);
    const double offsets[] = {0.05, -0.08, 0.02, 0.1, -0.06};
    for (int c = 0; c < 5; ++c) {
        JointConfiguration j;
        const double z = 0.5 * c;
        j.predictors = {z};
        const double crossing = -2 - 0.8 * z + offsets[c];
        for (int i = 0; i < 8; ++i) {
            BinomialPoint p;
            p.x = crossing - 0.7 + 0.2 * i;
            p.trials = 3;
            std::binomial_distribution<int> draw(3, 1 / (1 + std::exp(8 * (p.x - crossing))));
            p.successes = draw(rng);
            j.points.push_back(p);
        }
        data.push_back(j);
    }
    const JointFit fit = fitJointLaw(data, 0.5, 0.95);
    QVERIFY2(fit.ok, fit.note.c_str());
    QVERIFY(fit.slope < 0);
    QVERIFY(fit.tauUsed >= fit.tau);
    const double sigmaU = fit.tauUsed * std::fabs(fit.slope);
    // Parameters a0, b, s, u_1 … u_5.
    auto objective = [&](const std::vector<double> &q) {
        double ll = -q[2] * q[2] / (2 * 50.0 * 50.0);
        double info[8][8] = {};
        for (int c = 0; c < 5; ++c) {
            ll -= q[3 + c] * q[3 + c] / (2 * sigmaU * sigmaU);
            info[3 + c][3 + c] += 1 / (sigmaU * sigmaU);
            for (const auto &pt : data[c].points) {
                const double x[8] = {1, data[c].predictors[0], pt.x, 0, 0, 0, 0, 0};
                double row[8];
                std::copy(x, x + 8, row);
                row[3 + c] = 1;
                double eta = 0;
                for (int i = 0; i < 8; ++i) eta += q[i] * row[i];
                ll += pt.successes * eta - pt.trials * std::log1p(std::exp(eta));
                const double pr = 1 / (1 + std::exp(-eta)), w = pt.trials * pr * (1 - pr);
                for (int i = 0; i < 8; ++i)
                    for (int k = 0; k < 8; ++k) info[i][k] += w * row[i] * row[k];
            }
        }
        info[2][2] += 1 / (50.0 * 50.0);
        double logDet = 0; // Gaussian elimination with partial pivoting
        for (int col = 0; col < 8; ++col) {
            int pivot = col;
            for (int r = col + 1; r < 8; ++r)
                if (std::fabs(info[r][col]) > std::fabs(info[pivot][col])) pivot = r;
            std::swap(info[col], info[pivot]);
            logDet += std::log(std::fabs(info[col][col]));
            for (int r = col + 1; r < 8; ++r) {
                const double f = info[r][col] / info[col][col];
                for (int k = col; k < 8; ++k) info[r][k] -= f * info[col][k];
            }
        }
        return ll + 0.5 * logDet;
    };
    std::vector<double> q(8, 0.0);
    q[2] = -1;
    double value = objective(q), t = 1e-3;
    for (int it = 0; it < 200000; ++it) {
        std::vector<double> g(8);
        double norm = 0;
        for (int i = 0; i < 8; ++i) {
            std::vector<double> up = q, down = q;
            up[i] += 1e-6;
            down[i] -= 1e-6;
            g[i] = (objective(up) - objective(down)) / 2e-6;
            norm += g[i] * g[i];
        }
        if (norm < 1e-10) break;
        for (t *= 2;; t /= 2) {
            std::vector<double> next = q;
            for (int i = 0; i < 8; ++i) next[i] += t * g[i];
            const double v = objective(next);
            if (v > value || t < 1e-16) {
                q = next;
                value = std::max(v, value);
                break;
            }
        }
    }
    const double s = q[2];
    // The law's slope c1 = −b/s (α = −c1).
    QVERIFY2(std::fabs(-q[1] / s - fit.coef[1]) < 1e-3,
             qPrintable(QString("c1 %1 vs %2").arg(-q[1] / s).arg(fit.coef[1])));
    for (int c = 0; c < 5; ++c) {
        const double crossing = -(q[0] + q[1] * data[c].predictors[0] + q[3 + c]) / s;
        QVERIFY2(
            std::fabs(crossing - fit.crossing[c]) < 1e-3,
            qPrintable(
                QString("configuration %1: %2 vs %3").arg(c).arg(crossing).arg(fit.crossing[c])));
    }
    QVERIFY2(std::fabs(-fit.coef[1] - 0.8) < 0.3, qPrintable(QString::number(-fit.coef[1])));
}

// A seed's runs bracket its own threshold: the cut that gets the fewest verdicts wrong (the
// lower middle one among ties), open on a side no run closes; a seed that learned beyond a value
// where it failed is not monotone. The verdicts are the dense scan's (FINDINGS, issue 53).
void TestSearch::aSeedsThresholdIsBracketed()
{
    // η rising, learned below the threshold: 1 1 0 0, in any order.
    SeedBracket b = seedBracket({{-2, false}, {-3, true}, {-1, false}, {-2.5, true}}, true);
    QCOMPARE(b.low, -2.5);
    QCOMPARE(b.high, -2.0);
    QVERIFY(b.monotone() && b.closed());
    QCOMPARE(b.runs, 4);
    // Every run learned: open above, at the highest value.
    b = seedBracket({{-3, true}, {-2, true}}, true);
    QCOMPARE(b.low, -2.0);
    QVERIFY(std::isinf(b.high) && b.monotone() && !b.closed());
    // m 24, 12 heads, seed 1002: 1 0 1 0 0. Cuts after the first or the third value get one verdict
    // wrong each; the lower is taken.
    const std::vector<double> x = {-2.30, -2.15, -2.00, -1.85, -1.70};
    b = seedBracket({{x[0], true}, {x[1], false}, {x[2], true}, {x[3], false}, {x[4], false}},
                    true);
    QCOMPARE(b.wrong, 1);
    QVERIFY(!b.monotone());
    QCOMPARE(b.low, x[0]);
    QCOMPARE(b.high, x[1]);
    // Seed 1003: 0 1 0 1 0, two wrong at best.
    b = seedBracket({{x[0], false}, {x[1], true}, {x[2], false}, {x[3], true}, {x[4], false}},
                    true);
    QCOMPARE(b.wrong, 2);
    // Learned above the threshold (an increasing boundary): 0 0 1.
    b = seedBracket({{1, false}, {2, false}, {3, true}}, false);
    QCOMPARE(b.low, 2.0);
    QCOMPARE(b.high, 3.0);
    QVERIFY(b.monotone());
}

// Thresholds known exactly (brackets 1e-6 wide) give Student's t interval of their mean, and σ
// their standard deviation with divisor n; the t quantiles are the tables'.
void TestSearch::theThresholdsFitIsStudentsTForExactThresholds()
{
    QVERIFY(std::fabs(studentTQuantile(0.975, 1) - 12.7062) < 1e-3);
    QVERIFY(std::fabs(studentTQuantile(0.975, 3) - 3.18245) < 1e-4);
    QVERIFY(std::fabs(studentTQuantile(0.975, 7) - 2.36462) < 1e-4);
    QVERIFY(std::fabs(studentTQuantile(0.025, 30) + 2.04227) < 1e-4);
    const std::vector<double> t = {-2.1, -2.3, -1.9, -2.5, -2.0, -2.2};
    std::vector<SeedBracket> brackets;
    double mean = 0;
    for (double v : t) {
        SeedBracket b;
        b.low = v - 5e-7;
        b.high = v + 5e-7;
        brackets.push_back(b);
        mean += v / t.size();
    }
    double ss = 0;
    for (double v : t) ss += (v - mean) * (v - mean);
    const double sd = std::sqrt(ss / (t.size() - 1));
    const double half = 2.570582 * sd / std::sqrt(double(t.size())); // t(0.975, 5)
    const ThresholdFit fit = fitThresholds(brackets, 0.95, -4, -1);
    QVERIFY(fit.ok && fit.interval.ok);
    QCOMPARE(fit.seeds, 6);
    QVERIFY2(std::fabs(fit.mu - mean) < 1e-4, qPrintable(QString::number(fit.mu)));
    QVERIFY(std::fabs(fit.sigma - std::sqrt(ss / t.size())) < 1e-3);
    QVERIFY2(std::fabs(fit.interval.low - (mean - half)) < 1e-3,
             qPrintable(QString::number(fit.interval.low)));
    QVERIFY(std::fabs(fit.interval.high - (mean + half)) < 1e-3);
    QVERIFY(!fit.interval.lowOpen && !fit.interval.highOpen);
    // A seed open on one side still counts: it pulls the estimate its way.
    brackets.push_back({-1.5, INFINITY});
    QVERIFY(fitThresholds(brackets, 0.95, -4, -1).mu > fit.mu);
}

void TestSearch::pairedSeedsCoverThePopulationsCrossing_data()
{
    QTest::addColumn<double>("slope");
    QTest::addColumn<double>("seedSpread");
    QTest::addColumn<double>("monotoneAtLeast");
    QTest::addColumn<bool>("seedsMatter");
    QTest::newRow("seeds with thresholds of their own, 0.15 decades apart")
        << 40.0 << 0.15 << 0.85 << true;
    QTest::newRow("seeds that do not matter, a gradual boundary (as the dense scans found)")
        << 6.0 << 0.0 << 0.0 << false;
}

// Seeds that differ: the crossing a user wants is the population's (P(learned) over seeds = ½).
// With `replicates: paired` (each seed bisects its own bracket) and with `replicates: fresh`
// (every run its own seed) the 95 % intervals hold it at least 90 % of the time, whether seeds
// carry thresholds of their own or not, and α's interval holds the truth; seeds that carry
// thresholds are reported monotone. The first seed at every η (replicates: 1) finds that seed's
// crossing: where seeds matter its intervals miss the population's most of the time.
void TestSearch::pairedSeedsCoverThePopulationsCrossing()
{
    QFETCH(double, slope);
    QFETCH(double, seedSpread);
    QFETCH(double, monotoneAtLeast);
    QFETCH(bool, seedsMatter);
    constexpr int kSearches = 60;
    int intervals = 0, covered = 0, lawFits = 0, alphaCovered = 0, runs = 0;
    int seeds = 0, monotone = 0, separateIntervals = 0, separateCovered = 0, separateRuns = 0;
    double widthSum = 0, separateWidth = 0;
    int pooledIntervals = 0, pooledCovered = 0;
    double pooledWidth = 0;
    int freshIntervals = 0, freshCovered = 0, freshRuns = 0, freshAlpha = 0;
    double freshWidth = 0;
    for (int s = 0; s < kSearches; ++s) {
        const SimulatedTrainer trainer{
            .slope = slope, .seed = uint64_t(2000 + s), .seedSpread = seedSpread};
        Session session = searchSession();
        session.search->seedPlan = SearchSpec::SeedPlan::Paired;
        runSearch(session, trainer);
        const SearchReport report = searchReport(session);
        QVERIFY(report.finished);
        QCOMPARE(report.seeds, std::string("paired"));
        runs += report.runs;
        countCoverage(report, trainer, &intervals, &covered, &widthSum);
        for (const auto &c : report.configurations) {
            for (const auto &seed : c.seeds) seeds += !seed.verdicts.empty();
            monotone += c.monotoneSeeds();
            if (c.alternative.ok && c.stopped()) {
                const double truth = trainer.trueCrossing(dimensionNumber(c.config, "head_dim"));
                ++pooledIntervals;
                pooledCovered += c.alternative.low <= truth && truth <= c.alternative.high;
                pooledWidth += c.alternative.width();
            }
        }
        if (report.law.ok) {
            ++lawFits;
            alphaCovered +=
                report.law.alphaLow <= trainer.alpha && trainer.alpha <= report.law.alphaHigh;
        }
        // The same trainer searched with the first seed at every η (replicates: 1) and with a
        // fresh seed for every run.
        Session firstSeed = searchSession();
        runSearch(firstSeed, trainer);
        const SearchReport other = searchReport(firstSeed);
        separateRuns += other.runs;
        countCoverage(other, trainer, &separateIntervals, &separateCovered, &separateWidth);
        Session fresh = searchSession();
        fresh.search->seedPlan = SearchSpec::SeedPlan::Fresh;
        runSearch(fresh, trainer);
        const SearchReport freshReport = searchReport(fresh);
        QCOMPARE(freshReport.seeds, std::string("fresh"));
        freshRuns += freshReport.runs;
        countCoverage(freshReport, trainer, &freshIntervals, &freshCovered, &freshWidth);
        if (freshReport.law.ok)
            freshAlpha += freshReport.law.alphaLow <= trainer.alpha &&
                          trainer.alpha <= freshReport.law.alphaHigh;
    }
    const double coverage = double(covered) / intervals;
    const double alphaCoverage = double(alphaCovered) / lawFits;
    const double monotoneShare = double(monotone) / seeds;
    qInfo("%d paired searches: η* coverage %.3f of %d (mean width %.3f decades), α coverage %.3f "
          "of %d fits, %.1f runs and %.1f seeds per configuration, %.3f of seeds monotone; "
          "unpaired: coverage %.3f of %d (mean width %.3f), %.1f runs per configuration",
          kSearches, coverage, intervals, widthSum / intervals, alphaCoverage, lawFits,
          double(runs) / (kSearches * 5), double(seeds) / (kSearches * 5), monotoneShare,
          double(separateCovered) / separateIntervals, separateIntervals,
          separateWidth / separateIntervals, double(separateRuns) / (kSearches * 5));
    qInfo("the logistic over every run (the check): coverage %.3f of %d, mean width %.3f; fresh "
          "seeds: "
          "coverage %.3f of %d (mean width %.3f), α %d of %d, %.1f runs per configuration",
          double(pooledCovered) / pooledIntervals, pooledIntervals, pooledWidth / pooledIntervals,
          double(freshCovered) / freshIntervals, freshIntervals, freshWidth / freshIntervals,
          freshAlpha, kSearches, double(freshRuns) / (kSearches * 5));
    QVERIFY(intervals >= kSearches * 5 * 9 / 10);
    QVERIFY2(coverage >= 0.9, qPrintable(QString::number(coverage)));
    QVERIFY(lawFits >= kSearches * 9 / 10);
    QVERIFY2(alphaCoverage >= 0.9, qPrintable(QString::number(alphaCoverage)));
    QVERIFY2(monotoneShare >= monotoneAtLeast, qPrintable(QString::number(monotoneShare)));
    const double freshCoverage = double(freshCovered) / freshIntervals;
    QVERIFY(freshIntervals >= kSearches * 5 * 9 / 10);
    QVERIFY2(freshCoverage >= 0.9, qPrintable(QString::number(freshCoverage)));
    QVERIFY2(freshAlpha >= kSearches * 9 / 10, qPrintable(QString::number(freshAlpha)));
    const double firstSeedCoverage = double(separateCovered) / separateIntervals;
    if (seedsMatter)
        QVERIFY2(firstSeedCoverage < 0.8, qPrintable(QString::number(firstSeedCoverage)));
}

// A search over m_H and a stabilizer (qk_norm off / gain): the configurations fall into two
// groups, each with its own law. The simulated trainer's boundary has α 1 without qk_norm and 0
// (flat) with it; each group's interval covers its own α, and the two are told apart.
void TestSearch::widthAndHeadsAreSeparateExponents_data()
{
    QTest::addColumn<double>("a");
    QTest::addColumn<double>("b");
    QTest::addColumn<bool>("joint");
    QTest::newRow("μP's width limit (1, 0), separate model") << 1.0 << 0.0 << false;
    QTest::newRow("the paper's η·sqrt(m_H) (½, ½), separate model") << 0.5 << 0.5 << false;
    QTest::newRow("μP's width limit (1, 0), joint model") << 1.0 << 0.0 << true;
}

// Issue 77: searches over width × heads whose boundary follows η* = C m^−a n_H^b: the report's
// two exponents hold the truth in their intervals (in ≥ 80 % of the searches for 95 % intervals
// over few searches), and are the law of m_H and n_H re-expressed (a = α, b = α − β).
void TestSearch::widthAndHeadsAreSeparateExponents()
{
    QFETCH(double, a);
    QFETCH(double, b);
    QFETCH(bool, joint);
    constexpr int kSearches = 12;
    int fitted = 0, aCovered = 0, bCovered = 0, bothCovered = 0;
    for (int s = 0; s < kSearches; ++s) {
        SimulatedTrainer trainer;
        trainer.slope = 12;
        trainer.log10C = -1.0;
        trainer.widthExponent = a;
        trainer.headsExponent = b;
        trainer.seed = uint64_t(100 + s);
        Session session = searchSession();
        session.search->model = joint ? SearchSpec::Model::Joint : SearchSpec::Model::Separate;
        session.search->lawAlso = {"heads"};
        sweepWidths(session, {48, 96, 192});
        runSearch(session, trainer);
        const SearchReport report = searchReport(session, "", {}, /*check=*/true);
        const WidthAndHeads &wh = report.widthAndHeads;
        QVERIFY2(wh.ok, wh.note.c_str());
        ++fitted;
        QCOMPARE(wh.law.model, std::string(joint ? "joint" : "separate"));
        const bool inA = wh.aLow() <= a && a <= wh.aHigh(), inB = wh.bLow() <= b && b <= wh.bHigh();
        aCovered += inA;
        bCovered += inB;
        bothCovered += inA && inB;
        QVERIFY(std::isfinite(wh.correlation()) && std::fabs(wh.correlation()) < 1);
        // The same fit as the law of m_H and n_H: a = α, b = α − β.
        QVERIFY(report.law.ok && report.law.beta.size() == 1 && report.law.leftOut.empty());
        QVERIFY2(std::fabs(wh.a() - report.law.alpha) < 0.02,
                 qPrintable(QString("a %1, α %2").arg(wh.a()).arg(report.law.alpha)));
        QVERIFY2(
            std::fabs(wh.b() - (report.law.alpha - report.law.beta[0])) < 0.02,
            qPrintable(
                QString("b %1, α − β %2").arg(wh.b()).arg(report.law.alpha - report.law.beta[0])));
    }
    qInfo("a covered %d, b covered %d, both %d of %d", aCovered, bCovered, bothCovered, fitted);
    QVERIFY2(
        aCovered >= kSearches * 8 / 10 && bCovered >= kSearches * 8 / 10,
        qPrintable(
            QString("a covered %1, b covered %2 of %3").arg(aCovered).arg(bCovered).arg(fitted)));
    // One width only: no decomposition, and the report says why.
    Session plain = searchSession();
    SimulatedTrainer trainer;
    runSearch(plain, trainer);
    const WidthAndHeads none = searchReport(plain, "", {}, true).widthAndHeads;
    QVERIFY(!none.ok);
    QVERIFY2(none.note.find("d_model by one value") != std::string::npos, none.note.c_str());
}

void TestSearch::anAxisThatFollowsFromTheOthersIsLeftOut_data()
{
    bothModels();
}

// One width (m = 96 with 1 … 12 heads): log10 n_H = log10 96 − log10 m_H, so a law asked for
// head_dim and heads cannot tell their exponents apart. The report leaves heads out and fits
// head_dim alone, the α a law of head_dim alone gets, and says so in its law, in summary's text
// and in the stored report (the 512-wide out-of-sample search of issue 77 was such a search).
// With several widths heads stays in (widthAndHeadsAreSeparateExponents).
void TestSearch::anAxisThatFollowsFromTheOthersIsLeftOut()
{
    QFETCH(bool, joint);
    SimulatedTrainer trainer;
    trainer.slope = 12;
    Session session = searchSession();
    session.search->model = joint ? SearchSpec::Model::Joint : SearchSpec::Model::Separate;
    session.search->lawAlso = {"heads"};
    runSearch(session, trainer);
    const SearchReport report = searchReport(session, "", {}, /*check=*/true);
    const LawFit &law = report.law;
    QVERIFY2(law.ok, law.note.c_str());
    QVERIFY(law.also.empty() && law.beta.empty());
    QCOMPARE(law.leftOut, std::vector<std::string>{"heads"});
    QCOMPARE(report.alternative.leftOut, law.leftOut); // the other model's law, the check
    QVERIFY2(
        law.alphaLow <= trainer.alpha && trainer.alpha <= law.alphaHigh,
        qPrintable(QString("α %1 [%2, %3]").arg(law.alpha).arg(law.alphaLow).arg(law.alphaHigh)));
    Session alone = session;
    alone.search->lawAlso.clear();
    const LawFit plain = searchReport(alone, "", {}, true).law;
    QVERIFY(plain.ok && plain.leftOut.empty());
    QCOMPARE(law.alpha, plain.alpha);
    const std::string text = searchSummaryText(report);
    QVERIFY2(text.find("heads left out: over these configurations it follows from head_dim") !=
                 std::string::npos,
             text.c_str());
    YAML::Emitter out;
    yaml::writeSearchReport(out, report, session.runs.size());
    QVERIFY2(std::string(out.c_str()).find("left_out: [heads]") != std::string::npos, out.c_str());
    // Asked on the command line (summary --law-x head_dim --law-also heads): the same.
    QCOMPARE(searchReport(alone, "head_dim", {"heads"}).law.leftOut, law.leftOut);
}

void TestSearch::aPredictionIntervalCoversTheTruthAtItsRate_data()
{
    bothModels();
}

// Issue 77: searches of five head counts at m = 96 whose configurations scatter 0.1 decades about
// η* = C m_H^−½ (m_H 96 down to 8); the law predicts η* at head counts never searched (4 and 8
// heads: m_H 24 and 12, inside the fitted span; 24 and 48 heads: m_H 4 and 2, beyond it), each
// with its own draw of the scatter. The 95 % prediction intervals hold the truth at about their
// rate (≥ 88 % here over 30 searches × 4 predictions), and those beyond the span say so.
void TestSearch::aPredictionIntervalCoversTheTruthAtItsRate()
{
    QFETCH(bool, joint);
    constexpr int kSearches = 30;
    int predictions = 0, covered = 0;
    double widthSum = 0;
    for (int s = 0; s < kSearches; ++s) {
        SimulatedTrainer trainer;
        trainer.slope = 12;
        trainer.scatter = 0.1;
        trainer.seed = uint64_t(500 + s);
        Session session = searchSession();
        session.search->model = joint ? SearchSpec::Model::Joint : SearchSpec::Model::Separate;
        runSearch(session, trainer);
        const SearchReport report = searchReport(session);
        const LawFit &law = report.law;
        QVERIFY2(law.ok, law.note.c_str());
        for (int heads : {4, 8, 24, 48}) {
            const double headDim = 96.0 / heads;
            // By the law the report chooses (the power law, unless the test sees a bend).
            const CrossingPrediction p = predictCrossing(report, law, {std::log10(headDim)});
            QVERIFY2(p.ok, p.note.c_str());
            const double truth = trainer.trueCrossing(headDim);
            ++predictions;
            covered += p.low <= truth && truth <= p.high;
            widthSum += p.high - p.low;
            QCOMPARE(p.beyond.empty(), heads < 24);
            QVERIFY(p.scatter >= 0 && p.lawSe > 0);
        }
    }
    const double coverage = double(covered) / predictions;
    qInfo("%d of %d predictions covered (%.0f %%), mean width %.2f decades", covered, predictions,
          100 * coverage, widthSum / predictions);
    QVERIFY2(coverage >= 0.88, qPrintable(QString::number(coverage)));
    // No law, no prediction; and the reason is said.
    LawFit none;
    none.note = "1 configurations with a closed interval";
    const CrossingPrediction p = predictCrossing(none, {1.0});
    QVERIFY(!p.ok && p.note.find("no law") != std::string::npos);
}

// Issue 77: searches over m_H from 2 to 384 (widths 24, 96, 384 × 1–12 heads). Where the truth
// bends (γ = −0.25 per decade², the sign Figure 2's crossings show), the bent law is chosen in at
// least 8 of 10 searches and γ's interval holds it as often; where it is a power law, the bend is
// chosen in at most 2 of 10 (the test's level is 5 %). The misfit lists every configuration.
void TestSearch::aBentLawIsChosenOverThePowerLaw()
{
    constexpr int kSearches = 10;
    int chosenBent = 0, covered = 0, chosenStraight = 0;
    for (int s = 0; s < kSearches; ++s) {
        for (double curvature : {-0.25, 0.0}) {
            SimulatedTrainer trainer;
            trainer.slope = 12;
            trainer.curvature = curvature;
            trainer.seed = uint64_t(700 + s);
            Session session = searchSession();
            sweepWidths(session, {24, 96, 384});
            runSearch(session, trainer);
            const SearchReport report = searchReport(session, "", {}, /*check=*/true);
            const LawBend &bend = report.bend;
            QVERIFY2(bend.ok, bend.note.c_str());
            QCOMPARE(report.law.residuals.size(), size_t(report.law.configurations));
            QVERIFY(std::fabs(report.law.residuals.front().sigmas) >=
                    std::fabs(report.law.residuals.back().sigmas));
            if (curvature != 0) {
                chosenBent += bend.chosen;
                covered += bend.gammaLow <= curvature && curvature <= bend.gammaHigh;
                QVERIFY(bend.alphaAtHigh > bend.alphaAtLow); // concave: steeper at large m_H
            } else {
                chosenStraight += bend.chosen;
            }
        }
    }
    qInfo("bent truth: chosen %d, γ covered %d of %d; power-law truth: bend chosen %d", chosenBent,
          covered, kSearches, chosenStraight);
    QVERIFY(chosenBent >= 8 && covered >= 8 && chosenStraight <= 2);
}

// Issue 77: where the truth bends (γ = −0.25, configurations scattering 0.05 decades about it),
// predictions at head dimensions the searches never ran (3, 6, 20 and 256 inside the span, 1 and
// 768 beyond it) by the law the report chooses hold the truth at about their 95 % rate (≥ 88 %
// of 10 searches × 6), and more often than the power law's, whose ends lie off a curved
// boundary; the bent law's prediction is the one predict gives, and says so.
void TestSearch::aBentBoundaryIsPredictedByTheChosenLaw()
{
    constexpr int kSearches = 10;
    int predictions = 0, chosenCovered = 0, powerCovered = 0, bent = 0;
    for (int s = 0; s < kSearches; ++s) {
        SimulatedTrainer trainer;
        trainer.slope = 12;
        trainer.curvature = -0.25;
        trainer.scatter = 0.05;
        trainer.seed = uint64_t(900 + s);
        Session session = searchSession();
        sweepWidths(session, {24, 96, 384});
        runSearch(session, trainer);
        const SearchReport report = searchReport(session);
        QVERIFY2(report.bend.ok, report.bend.note.c_str());
        for (double headDim : {1.0, 3.0, 6.0, 20.0, 256.0, 768.0}) {
            const std::vector<double> at = {std::log10(headDim)};
            const CrossingPrediction chosen = predictCrossing(report, report.law, at);
            const CrossingPrediction power =
                predictCrossing(report, report.law, at, LawChoice::Power);
            QVERIFY2(chosen.ok && power.ok, (chosen.note + power.note).c_str());
            QCOMPARE(chosen.law, std::string(report.bend.chosen ? "bent" : "power"));
            QCOMPARE(power.law, std::string("power"));
            if (headDim == 1 || headDim == 768) QVERIFY(!chosen.beyond.empty());
            const double truth = trainer.trueCrossing(headDim);
            ++predictions;
            bent += chosen.law == "bent";
            chosenCovered += chosen.low <= truth && truth <= chosen.high;
            powerCovered += power.low <= truth && truth <= power.high;
        }
        // The bent law's own prediction is the chosen one where it is chosen.
        const CrossingPrediction own = predictCrossing(report.bend, {std::log10(20.0)});
        const CrossingPrediction asked =
            predictCrossing(report, report.law, {std::log10(20.0)}, LawChoice::Bent);
        QVERIFY(own.ok && own.law == "bent" && own.estimate == asked.estimate &&
                own.high == asked.high);
    }
    qInfo("%d of %d predictions from the bent law; the chosen law covered %d, the power law %d",
          bent, predictions, chosenCovered, powerCovered);
    QVERIFY2(chosenCovered >= predictions * 88 / 100 && chosenCovered > powerCovered,
             qPrintable(QString("chosen %1, power %2 of %3")
                            .arg(chosenCovered)
                            .arg(powerCovered)
                            .arg(predictions)));
}

// Issue 77: a search whose configurations carry a predicted interval (`start:`, written by
// `predict --into`) places round 0 over it instead of the whole range, and with an interval that
// holds the truth it needs fewer runs than from the whole range, to intervals that still hold it.
void TestSearch::aSearchStartsWhereThePredictionSays()
{
    Session session = searchSession();
    const std::map<std::string, std::string> three = {{"heads", "3"}};
    session.search->starts.push_back({three, 1e-3, 4e-3});
    QVERIFY(planSearchRound(session) > 0);
    int predicted = 0;
    for (const auto &p : session.search->probes) {
        if (p.configuration == three) {
            ++predicted;
            QVERIFY2(p.value >= 1e-3 * 0.999 && p.value <= 4e-3 * 1.001,
                     qPrintable(QString::number(p.value)));
        } else {
            QVERIFY(p.value >= session.search->low && p.value <= session.search->high);
        }
    }
    QCOMPARE(predicted, session.search->initialPoints);
    // The other configurations still span the range, its ends exactly.
    const auto ends = std::count_if(
        session.search->probes.begin(), session.search->probes.end(), [&](const SearchProbe &p) {
            return p.value == session.search->low || p.value == session.search->high;
        });
    QCOMPARE(int(ends), 2 * 4);
    // Written and read back.
    QVERIFY(sessionFromYaml(sessionToYaml(session), "s.yaml").search == session.search);

    // Twelve searches from the whole range and from an interval 0.6 decades wide around the
    // truth (off-centre by up to 0.2 decades, as a prediction is).
    constexpr int kSearches = 12;
    int runsWhole = 0, runsStarted = 0, coveredStarted = 0, intervals = 0;
    for (int s = 0; s < kSearches; ++s) {
        SimulatedTrainer trainer;
        trainer.slope = 12;
        trainer.seed = uint64_t(900 + s);
        for (bool started : {false, true}) {
            Session search = searchSession();
            if (started)
                for (const auto &labels : sweepConfigurations(search)) {
                    const double headDim = 96.0 / std::stod(labels.at("heads"));
                    const double centre = trainer.trueCrossing(headDim) + 0.2 * ((s % 3) - 1);
                    search.search->starts.push_back(
                        {labels, std::pow(10.0, centre - 0.3), std::pow(10.0, centre + 0.3)});
                }
            runSearch(search, trainer);
            const SearchReport report = searchReport(search);
            (started ? runsStarted : runsWhole) += report.runs;
            if (!started) continue;
            int dummyIntervals = 0, covered = 0;
            double width = 0;
            countCoverage(report, trainer, &dummyIntervals, &covered, &width);
            intervals += dummyIntervals;
            coveredStarted += covered;
        }
    }
    qInfo("runs over %d searches: %d from the whole range, %d from the prediction; the latter's "
          "intervals held the truth %d of %d",
          kSearches, runsWhole, runsStarted, coveredStarted, intervals);
    QVERIFY(runsStarted < runsWhole);
    QVERIFY(coveredStarted >= intervals * 85 / 100);
}

// A prediction a decade off the truth, either way: round 0 spans it and every run falls on one
// side; the search steps out towards the crossing (doubling) instead of calling it out of range,
// and finds it. Only runs at the range's end itself say a crossing lies outside the range, as
// they do for a search over the whole range.
void TestSearch::aWrongPredictionIsSteppedOutOf()
{
    int configurations = 0, intervals = 0, covered = 0;
    for (auto direction : {SearchSpec::Direction::Auto, SearchSpec::Direction::Decreasing})
        for (double off : {-1.0, +1.0})
            for (int s = 0; s < 4; ++s) {
                SimulatedTrainer trainer;
                trainer.slope = 12;
                trainer.seed = uint64_t(700 + s);
                Session search = searchSession();
                search.search->direction = direction;
                for (const auto &labels : sweepConfigurations(search)) {
                    const double centre =
                        trainer.trueCrossing(96.0 / std::stod(labels.at("heads"))) + off;
                    search.search->starts.push_back(
                        {labels, std::pow(10.0, centre - 0.25), std::pow(10.0, centre + 0.25)});
                }
                runSearch(search, trainer);
                const SearchReport report = searchReport(search);
                for (const auto &c : report.configurations) {
                    ++configurations;
                    QVERIFY2(c.state != SearchState::OutOfRange, c.note.c_str());
                }
                double width = 0;
                countCoverage(report, trainer, &intervals, &covered, &width);
            }
    qInfo("a prediction a decade off: %d intervals of %d configurations, %d hold the truth",
          intervals, configurations, covered);
    QCOMPARE(intervals, configurations);
    QVERIFY(covered >= intervals * 85 / 100);

    // A crossing below the range (η* about 1e-5 against a range from 1e-4): from the whole range
    // and from a prediction inside it alike, out of range once the range's low end has run.
    for (bool started : {false, true}) {
        SimulatedTrainer trainer;
        trainer.log10C = -4;
        trainer.slope = 30;
        Session search = searchSession();
        search.search->direction = SearchSpec::Direction::Decreasing;
        if (started)
            for (const auto &labels : sweepConfigurations(search))
                search.search->starts.push_back({labels, 3e-3, 1e-2});
        runSearch(search, trainer);
        for (const auto &c : searchReport(search).configurations) {
            QCOMPARE(c.state, SearchState::OutOfRange);
            // From the whole range its ends; from the prediction, the low end up to its runs.
            const std::string ends = "stayed stuck over " + yaml::formatNumber(search.search->low) +
                                     " … " +
                                     (started ? "" : yaml::formatNumber(search.search->high));
            QVERIFY2(c.note.find(ends) != std::string::npos, c.note.c_str());
        }
        const auto atTheEnd =
            std::count_if(search.search->probes.begin(), search.search->probes.end(),
                          [&](const SearchProbe &p) { return p.value == search.search->low; });
        QCOMPARE(int(atTheEnd), 5);
    }
}

void TestSearch::eachStabilizerGetsItsOwnLaw()
{
    int covered = 0, apart = 0;
    constexpr int kSearches = 10;
    for (int s = 0; s < kSearches; ++s) {
        SimulatedTrainer trainer;
        trainer.slope = 30;
        trainer.alpha = 1.0;
        trainer.alphaWithQkNorm = 0.0;
        trainer.seed = uint64_t(s);
        Session session = searchSession();
        AxisValue off, gain;
        off.kind = gain.kind = AxisValue::Kind::Text;
        off.text = "off";
        gain.text = "gain";
        session.axes.push_back({"qk_norm", {off, gain}});
        runSearch(session, trainer);
        const SearchReport report = searchReport(session);
        QCOMPARE(report.groups.size(), size_t(2));
        double alphas[2] = {NAN, NAN};
        for (const auto &g : report.groups) {
            QCOMPARE(g.labels.size(), size_t(1));
            const bool normed = g.labels.at("qk_norm") == "gain";
            QVERIFY(g.law.configurations >= 4); // m_H 96 without: η* 1e-4, at the range's edge
            const double truth = normed ? 0.0 : 1.0;
            covered += g.law.ok && g.law.alphaLow <= truth && truth <= g.law.alphaHigh;
            alphas[normed] = g.law.alpha;
        }
        apart += alphas[0] - alphas[1] > 0.5;
    }
    QVERIFY2(covered >= 2 * kSearches * 8 / 10, qPrintable(QString::number(covered)));
    QVERIFY2(apart >= kSearches * 9 / 10, qPrintable(QString::number(apart)));
    // A search whose configurations differ only in the model's shape has no groups.
    Session plain = searchSession();
    SimulatedTrainer trainer;
    runSearch(plain, trainer);
    QVERIFY(searchReport(plain).groups.empty());
}

// Runs at η below 1e-3 never learn (a second boundary, at small η). Searched with `direction:
// decreasing`, every configuration still finds the upper crossing within its interval, and says
// how many runs it left out; without it the fit mixes the two boundaries and misses.
void TestSearch::aSecondBoundaryAtSmallEtaIsLeftOut()
{
    int coveredWith = 0, coveredWithout = 0, total = 0, setAside = 0;
    for (int s = 0; s < 20; ++s) {
        SimulatedTrainer trainer;
        trainer.slope = 30;
        trainer.log10C = -1.0; // η* from 1e-2 (m_H 96) to 3.5e-2 (m_H 8)
        trainer.slowBelow = 1e-3;
        trainer.seed = uint64_t(s);
        for (bool decreasing : {true, false}) {
            Session session = searchSession();
            if (decreasing) session.search->direction = SearchSpec::Direction::Decreasing;
            runSearch(session, trainer);
            for (const auto &c : searchReport(session).configurations) {
                const double truth = trainer.trueCrossing(dimensionNumber(c.config, "head_dim"));
                const bool covered =
                    c.interval.ok && c.interval.low <= truth && truth <= c.interval.high;
                (decreasing ? coveredWith : coveredWithout) += covered;
                total += decreasing;
                if (decreasing) setAside += c.setAside;
            }
        }
    }
    qInfo("upper crossing covered: %d of %d with direction: decreasing (%d runs left out), %d "
          "without",
          coveredWith, total, setAside, coveredWithout);
    QVERIFY(setAside > 0);
    QVERIFY(coveredWith >= total * 9 / 10);
    QVERIFY(coveredWithout < coveredWith);
    // Paired seeds say so once per configuration too (their seed model refits the state).
    const SimulatedTrainer slow{.log10C = -1.0, .slope = 30, .slowBelow = 1e-3};
    Session paired = searchSession();
    paired.search->direction = SearchSpec::Direction::Decreasing;
    paired.search->seedPlan = SearchSpec::SeedPlan::Paired;
    runSearch(paired, slow);
    int noted = 0;
    for (const auto &c : searchReport(paired).configurations) {
        if (c.setAside == 0) continue;
        ++noted;
        const std::string said = "the first that learned left out";
        const size_t first = c.note.find(said);
        QVERIFY2(first != std::string::npos && c.note.find(said, first + 1) == std::string::npos,
                 c.note.c_str());
    }
    QVERIFY(noted > 0);
}

// A search whose process died in the middle of a round (some of the round's results stored, the
// others not) goes on from the saved session to exactly the rounds and result of one that ran
// through.
void TestSearch::aSearchKilledMidRoundResumesToTheSameResult()
{
    SimulatedTrainer trainer;
    trainer.seed = 7;
    Session whole = searchSession();
    runSearch(whole, trainer);

    Session killed = searchSession();
    for (int round = 0; round < 3; ++round) {
        QVERIFY(planSearchRound(killed) > 0);
        trainer.train(killed);
    }
    QVERIFY(planSearchRound(killed) > 0);
    QVERIFY(trainer.train(killed, 4) == 4); // four runs of round 3 finished, then the kill
    // What was on disk: the session (its probes) and the stored runs; read back as a new process.
    const std::string saved = sessionToYaml(killed);
    Session resumed = sessionFromYaml(saved, "killed.yaml");
    expandSweep(resumed);
    QCOMPARE(int(pendingRuns(resumed).size()) > 0, true);
    QCOMPARE(planSearchRound(resumed), 0); // the round is not over: nothing new is planned
    trainer.train(resumed);
    runSearch(resumed, trainer);

    QVERIFY(resumed.search->probes == whole.search->probes);
    const SearchReport a = searchReport(whole), b = searchReport(resumed);
    QCOMPARE(b.runs, a.runs);
    QCOMPARE(searchSummaryText(b), searchSummaryText(a));
}

// The search block round-trips through YAML exactly, probes included, and bad values are refused
// with their key.
void TestSearch::aReportsNumbersArePinnedToItsMethod()
{
    // One search's report to 9 digits (a libm's last bit aside). A change to the fits, their intervals or the law that
    // moves these numbers fails here: raise kSearchReportMethod (SearchReport.h) with the new pin,
    // so that reports stored by the old computation read as stale (issue 78: the stored
    // archives' reports differed from `summary` by 3e-5 relative, and nothing said so).
    SimulatedTrainer trainer;
    Session session = searchSession();
    runSearch(session, trainer);
    const SearchReport report = searchReport(session);
    QVERIFY(report.law.ok);
    std::vector<double> numbers = {report.law.alpha, report.law.alphaLow, report.law.alphaHigh,
                                   report.law.log10C, report.law.chi2};
    for (const auto &c : report.configurations)
        if (c.interval.ok)
            numbers.insert(numbers.end(), {c.interval.estimate, c.interval.low, c.interval.high});
    QCOMPARE(kSearchReportMethod, 1);
    // Made with HEADLAB_PRINT_PIN=1 build/tests/search/test_search aReportsNumbersArePinnedToItsMethod
    const std::vector<double> pinned = {
        0.4537626863112153,  0.31521357228441538, 0.59231180033801523, -2.0572247431494293,
        0.61051035839209067, -2.9343890589056478, -3.1661451999135086, -2.8015874209013782,
        -2.8713149187673648, -3.0338015526461395, -2.7217920381391627, -2.7230537149286329,
        -2.8258828293989224, -2.6268632372808995, -2.6183597725836232, -2.7424419850807933,
        -2.3734921051460356, -2.4662717186797658, -2.5221378406354091, -2.3731461027593692};
    if (qEnvironmentVariableIsSet("HEADLAB_PRINT_PIN"))
        for (double x : numbers) std::printf("%.17g,\n", x);
    QCOMPARE(numbers.size(), pinned.size());
    for (size_t i = 0; i < numbers.size(); ++i)
        QVERIFY2(std::abs(numbers[i] - pinned[i]) <= 1e-9 * std::max(1.0, std::abs(pinned[i])),
                 qPrintable(QStringLiteral("number %1 is %2, pinned %3: the report's computation "
                                           "changed; raise kSearchReportMethod and this pin")
                                .arg(i)
                                .arg(numbers[i], 0, 'g', 17)
                                .arg(pinned[i], 0, 'g', 17)));
}

void TestSearch::theSessionFileRecordsTheRounds()
{
    SimulatedTrainer trainer;
    Session session = searchSession();
    session.search->lawAlso = {"d_model"};
    runSearch(session, trainer);
    QVERIFY(session.search->probes.size() > 5);
    const Session back = sessionFromYaml(sessionToYaml(session), "s.yaml");
    QVERIFY(back.search.has_value());
    QVERIFY(*back.search == *session.search);
    // Seed plans survive the file: paired seeds with their count and probes, and fresh seeds,
    // the default of a search that names none.
    Session paired = searchSession();
    paired.search->seedPlan = SearchSpec::SeedPlan::Paired;
    paired.search->seeds = 5;
    runSearch(paired, trainer);
    QVERIFY(sessionFromYaml(sessionToYaml(paired), "p.yaml").search == paired.search);
    QVERIFY(sessionToYaml(paired).find("replicates: paired") != std::string::npos);
    const SearchReport pairedReport = searchReport(paired);
    QVERIFY(std::any_of(pairedReport.configurations.begin(), pairedReport.configurations.end(),
                        [](const ConfigurationSearch &c) { return c.seeds.size() >= 5; }));
    QVERIFY(searchSummaryText(pairedReport).find("paired seeds:") != std::string::npos);
    QVERIFY(searchSummaryCsv(pairedReport).find("monotone_seeds") != std::string::npos);
    Session fresh = searchSession();
    fresh.search->seedPlan = SearchSpec::SeedPlan::Fresh;
    runSearch(fresh, trainer);
    QVERIFY(sessionFromYaml(sessionToYaml(fresh), "f.yaml").search == fresh.search);
    std::set<uint64_t> seedsOfOne;
    int runsOfOne = 0;
    for (const auto &run : fresh.runs)
        if (run.labels.at("heads") == "1") {
            seedsOfOne.insert(run.config.initSeed);
            ++runsOfOne;
        }
    QCOMPARE(int(seedsOfOne.size()), runsOfOne);      // every run its own seed
    session.search->model = SearchSpec::Model::Joint; // model: joint survives the file
    session.search->lawWidth = 0.45;                  // and law_width with it
    QVERIFY(sessionFromYaml(sessionToYaml(session), "s.yaml").search == session.search);
    session.search->lawWidth = 0;
    // A replay: after round 1 the session holds rounds 0 and 1 only, their runs with results.
    const Session early = searchUntilRound(session, 1);
    QVERIFY(!early.search->probes.empty());
    for (const auto &probe : early.search->probes) QVERIFY(probe.round <= 1);
    QVERIFY(early.runs.size() < session.runs.size());
    for (const auto &run : early.runs) QVERIFY(isFinished(run.result.status));
    QCOMPARE(searchReport(early).rounds, 2);

    const std::string base =
        "schema_version: 2\nexperiment: {model: {d_model: 16}, phases: [{name: a, objective: "
        "answer, steps: 1, batch_size: 1}]}\n";
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"search: {axis: lr}", "search.range"},
        {"search: {axis: dropout, range: [1, 2]}", "search.axis"},
        {"search: {range: [0.1, 0.01]}", "low < high"},
        {"search: {range: [0, 0.01]}", "above 0"},
        {"search: {range: [1.0e-4, 0.1], budget: 3}", "search.budget"},
        {"search: {range: [1.0e-4, 0.1], target: 1}", "search.target"},
        {"search: {range: [1.0e-4, 0.1], law: {x: dropout}}", "search.law.x"},
        {"sweep: {lr: [0.1]}\nsearch: {range: [1.0e-4, 0.1]}", "sweep.lr"},
        {"sweep: {seed: [1]}\nsearch: {range: [1.0e-4, 0.1]}", "sweep.seed"},
        {"search: {range: [1.0e-4, 0.1], model: shared}", "search.model"},
        {"search: {range: [1, 8], scale: linear, model: joint}", "needs a log-scaled search"},
        {"search: {range: [1.0e-4, 0.1], replicates: twice}", "search.replicates"},
        // Names are written as the schema lists them, as model: JOINT is refused (issue 74).
        {"search: {range: [1.0e-4, 0.1], replicates: FRESH}", "search.replicates"},
        {"search: {range: [1.0e-4, 0.1], model: JOINT}", "search.model"},
        {"search: {range: [1.0e-4, 0.1], seeds: 4}", "search.seeds"},
        {"search: {range: [1.0e-4, 0.1], replicates: paired, seeds: 1}", "search.seeds"},
        {"search: {range: [1.0e-4, 0.1], replicates: paired, model: joint}", "search.model"},
        {"search: {range: [1.0e-4, 0.1], law_width: 0.5}", "search.law_width"},
        {"search: {range: [1.0e-4, 0.1], model: joint, law_width: 0}", "search.law_width"},
        {"search: {range: [1.0e-4, 0.1], replicates: paired, probes: [{round: 0, value: 0.01, "
         "replicates: 2}]}",
         "search.probes[0].replicates"},
        {"search: {range: [1.0e-4, 0.1], start: [{at: {heads: \"3\"}, low: 0.004, high: 0.001}]}",
         "search.start[0].high"},
        {"search: {range: [1.0e-4, 0.1], start: [{at: {heads: \"3\"}, low: 0, high: 0.001}]}",
         "search.start[0].low"},
        {"search: {range: [1.0e-4, 0.1], start: [{low: 0.001}]}", "search.start[0]"},
        {"search: {range: [1.0e-4, 0.1], start: [{low: 0.001, high: 0.01, width: 2}]}",
         "search.start[0].width"},
    };
    for (const auto &[yaml, where] : bad) {
        try {
            sessionFromYaml(base + yaml + "\n", "bad.yaml");
            QFAIL(qPrintable(QString::fromStdString("accepted: " + yaml)));
        } catch (const SessionError &e) {
            QVERIFY2(std::string(e.what()).find(where) != std::string::npos, e.what());
        }
    }
    // A search's seeds never wrap past 2^64 - 1 (issue 74: seed 18446744073709551610 with 10
    // replicates trained seeds 0 … 3): the last seed a configuration may take, experiment.seed +
    // budget - 1, is 2^64 - 1 at most; one more is refused at experiment.seed.
    auto withSeed = [&](const std::string &seed) {
        return "schema_version: 2\nexperiment: {seed: " + seed +
               ", model: {d_model: 16}, phases: [{name: a, objective: answer, steps: 1, "
               "batch_size: 1}]}\nsearch: {range: [1.0e-4, 0.1], budget: 40}\n";
    };
    QCOMPARE(sessionFromYaml(withSeed("18446744073709551576"), "ok.yaml").base.initSeed,
             uint64_t{18446744073709551576u}); // + 39 = 2^64 - 1
    try {
        sessionFromYaml(withSeed("18446744073709551577"), "wraps.yaml");
        QFAIL("a search whose seeds pass 2^64 - 1 was accepted");
    } catch (const SessionError &e) {
        const std::string what = e.what();
        QVERIFY2(what.find("experiment.seed") != std::string::npos, e.what());
        QVERIFY2(what.find("at most 18446744073709551576") != std::string::npos, e.what());
    }
}

namespace {

// The copy task of tests/search/fixtures (copy.txt, copy-search.yaml: a one-layer model learns it
// in 200 steps once η is large enough), copied into `dir`; returns the session's path.
QString copyFixture(const QTemporaryDir &dir)
{
    const QString fixtures = QStringLiteral(HEADLAB_SOURCE_DIR "/tests/search/fixtures/");
    QFile::copy(fixtures + "copy.txt", dir.filePath("copy.txt"));
    QFile::copy(fixtures + "copy-search.yaml", dir.filePath("search.yaml"));
    return dir.filePath("search.yaml");
}

QByteArray runCli(const QStringList &arguments, int *exitCode)
{
    QProcess cli;
    cli.start(HEADLAB_CLI_PATH, arguments);
    cli.waitForFinished(600'000);
    *exitCode = cli.exitCode();
    return cli.readAllStandardOutput() + cli.readAllStandardError();
}

} // namespace

// headlab-cli runs a search on a tiny CPU model; a dense grid of the same model (12 η × 3 seeds)
// agrees: the grid's own crossing lies in the search's interval's neighbourhood (the intervals
// overlap), and every grid η outside the search's interval learned on the side the search says.
void TestSearch::aTinyModelsCrossingAgreesWithADenseGrid()
{
    QTemporaryDir dir;
    copyFixture(dir);
    int status = -1;
    const QByteArray out = runCli({"run", dir.filePath("search.yaml")}, &status);
    QVERIFY2(status == 0, out.constData());
    QVERIFY2(out.contains("converged"), out.constData());
    Session search = loadSession(dir.filePath("search.yaml").toStdString());
    expandSweep(search);
    const SearchReport report = searchReport(search);
    QCOMPARE(report.configurations.size(), size_t(1));
    const ConfigurationSearch &found = report.configurations.front();
    QCOMPARE(found.state, SearchState::Converged);

    // The grid: the same experiment, η from 3e-5 to 3e-2 in 12 log-spaced steps, three seeds each.
    Session grid = loadSession(dir.filePath("search.yaml").toStdString());
    grid.search.reset();
    grid.runs.clear();
    grid.axes = {SweepAxis{"lr", {}}, SweepAxis{"seed", {}}};
    for (int i = 0; i < 12; ++i) {
        AxisValue v;
        v.number = std::pow(10.0, std::log10(3e-5) + 3.0 * i / 11);
        grid.axes[0].values.push_back(v);
    }
    for (int seed = 0; seed < 3; ++seed) {
        AxisValue v;
        v.kind = AxisValue::Kind::Unsigned;
        v.unsignedValue = uint64_t(seed);
        grid.axes[1].values.push_back(v);
    }
    grid.resultsDir.clear();
    grid.indexedRunFiles.clear();
    saveSessionAtomic(grid, dir.filePath("grid.yaml").toStdString());
    const QByteArray gridOut = runCli({"run", dir.filePath("grid.yaml")}, &status);
    QVERIFY2(status == 0, gridOut.constData());
    Session dense = loadSession(dir.filePath("grid.yaml").toStdString());
    expandSweep(dense);
    std::map<double, BinomialPoint> byLr;
    for (const auto &run : dense.runs) {
        BinomialPoint &p = byLr[run.config.lr];
        p.x = std::log10(run.config.lr);
        ++p.trials;
        p.successes += runLearned(dense, run.result).value_or(false);
    }
    std::vector<BinomialPoint> points;
    for (const auto &[lr, p] : byLr) points.push_back(p);
    const CrossingInterval gridInterval =
        crossingInterval(points, 0.5, 0.95, std::log10(3e-5), std::log10(3e-2));
    QVERIFY(gridInterval.ok);
    qInfo("search: η* %.3g [%.3g, %.3g] from %d runs; grid: η* %.3g [%.3g, %.3g] from %zu runs",
          std::pow(10, found.interval.estimate), std::pow(10, found.interval.low),
          std::pow(10, found.interval.high), found.runs, std::pow(10, gridInterval.estimate),
          std::pow(10, gridInterval.low), std::pow(10, gridInterval.high), dense.runs.size());
    QVERIFY(gridInterval.low <= found.interval.high && found.interval.low <= gridInterval.high);
    const bool learnsAbove = found.fit.b > 0;
    for (const auto &p : points) {
        const double fraction = double(p.successes) / p.trials;
        if (p.x > found.interval.high)
            QVERIFY2(learnsAbove ? fraction >= 0.5 : fraction <= 0.5,
                     qPrintable(QString::number(p.x)));
        if (p.x < found.interval.low)
            QVERIFY2(learnsAbove ? fraction <= 0.5 : fraction >= 0.5,
                     qPrintable(QString::number(p.x)));
    }
}

// A search killed in the middle of a round (its session file lists the round, some of the
// round's run files were never written) is run again by the same command and ends exactly as an
// uninterrupted one: the same rounds, runs and summary.
void TestSearch::theCliResumesAKilledSearch()
{
    QTemporaryDir dir;
    copyFixture(dir);
    int status = -1;
    QByteArray out = runCli({"run", dir.filePath("search.yaml"), "--threads", "1"}, &status);
    QVERIFY2(status == 0, out.constData());
    const QByteArray reference = runCli({"summary", dir.filePath("search.yaml")}, &status);
    QCOMPARE(status, 0);
    Session finished = loadSession(dir.filePath("search.yaml").toStdString());
    expandSweep(finished);
    const int rounds = searchReport(finished).rounds;
    QVERIFY(rounds >= 3);

    // The state a kill -9 in round 2 leaves: the session lists rounds 0–2, and only the first two
    // of round 2's run files were written. Rounds after it were never planned.
    Session killed = finished;
    std::erase_if(killed.search->probes, [](const SearchProbe &p) { return p.round > 2; });
    expandSweep(killed);
    int roundTwo = 0;
    for (const auto &run : killed.runs) {
        const bool inRoundTwo = std::any_of(
            killed.search->probes.begin(), killed.search->probes.end(),
            [&](const SearchProbe &p) { return p.round == 2 && p.value == run.config.lr; });
        if (inRoundTwo && roundTwo++ >= 2)
            QVERIFY(QFile::remove(
                QString::fromStdString(resultsDirFor(dir.filePath("search.yaml").toStdString()) +
                                       "/runs/" + runFileName(run.config))));
    }
    QVERIFY(roundTwo >= 3);
    // The session file itself as it was then: rounds 0–2 planned.
    Session onDisk = loadSession(dir.filePath("search.yaml").toStdString());
    std::erase_if(onDisk.search->probes, [](const SearchProbe &p) { return p.round > 2; });
    saveSessionAtomic(onDisk, dir.filePath("search.yaml").toStdString());
    out = runCli({"run", dir.filePath("search.yaml"), "--threads", "1"}, &status);
    QVERIFY2(status == 0, out.constData());
    QVERIFY2(out.contains("already finished"), out.constData());
    const QByteArray resumed = runCli({"summary", dir.filePath("search.yaml")}, &status);
    QCOMPARE(status, 0);
    QCOMPARE(resumed, reference);
}

QTEST_GUILESS_MAIN(TestSearch)
#include "test_search.moc"
