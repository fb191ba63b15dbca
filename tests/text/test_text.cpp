// test_text.cpp — the text task (EXPERIMENTS.md §3), head schedules and the QK rule (§4).
//
// Covers what a user relies on: the story corpus is seeded and sized, the byte tokenizer
// round-trips UTF-8, bad text files get messages naming the file, head schedules and their
// divisibility messages, the QK rule's per-layer learning rates, seeded sampling, and that a
// tiny text model trains on the CPU (its validation loss falls well below ln 256).
#include "core/config/HeadSchedule.h"
#include "core/config/RunConfig.h"
#include "core/model/Adam.h"
#include "core/model/HeadRoles.h"
#include "core/model/Transformer.h"
#include "core/schema/RunConfigFields.h"
#include "core/schema/TaskSpec.h"
#include "core/schema/text/StoryCorpus.h"
#include "core/schema/text/TextCorpus.h"
#include "core/tasks/text/TextTask.h"
#include "core/train/SweepRunner.h"
#include "core/train/Trainer.h"

#include <QtTest>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <set>

using namespace headlab;

namespace {

// QCOMPARE on a headlab enum would find headlab::toString by ADL and free its static string:
// compare the names instead.
template <typename Enum>
QString name(Enum e)
{
    return QString::fromLatin1(toString(e));
}

RunConfig tinyText(int64_t steps, uint64_t seed = 1)
{
    RunConfig c;
    c.task.kind = "text";
    c.task.corpusBytes = 200'000;
    c.task.contextLength = 32;
    c.task.sampleLength = 40;
    c.model.dModel = 32;
    c.model.heads = {2, 2};
    PhaseConfig p;
    p.name = "train";
    p.objective = Objective::NextToken;
    p.steps = steps;
    p.batchSize = 16;
    p.useScannedLr = true;
    c.phases = {p};
    c.lr = 3e-3;
    c.logEvery = 10;
    c.evalEvery = 50;
    c.evalBatches = 2; // 128 validation windows: enough to compare, fast on a CPU
    c.initSeed = seed;
    c.dataSeed = seed;
    c.device = "cpu";
    return c;
}

void writeFile(const QString &path, const std::string &bytes)
{
    std::ofstream out(path.toStdString(), std::ios::binary);
    out << bytes;
}

// One Adam step (eps 1e-12) with these per-parameter learning rates, through core/model/Adam.h: the
// per-parameter factors of the original API, or the per-parameter rates of the flat-buffer one.
template <typename A = Adam>
void firstAdamStep(Transformer &model, const std::vector<double> &perParamLr)
{
    OptimizerConfig optimizer;
    optimizer.eps = 1e-12;
    const double lr = perParamLr.front() > 0 ? perParamLr.front() : 1.0;
    if constexpr (requires(Transformer & m, OptimizerConfig o) { A(m, o); }) {
        A adam(model, optimizer);
        std::vector<torch::Tensor> rates;
        for (double v : perParamLr) rates.push_back(torch::tensor({float(v)}));
        adam.setLearningRates(rates);
        adam.step(torch::ones({}));
    } else {
        A adam(model.parameters(), optimizer, 1);
        for (size_t i = 0; i < perParamLr.size(); ++i)
            if (perParamLr[i] != lr)
                adam.setLrFactor(i, torch::tensor({float(perParamLr[i] / lr)}));
        adam.step(torch::tensor({float(lr)}));
    }
}

std::string sharedDataFile(const char *name)
{
    return std::string(HEADLAB_SHARED_DIR) + "/data/" + name;
}

} // namespace

class TestText : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // --- the story corpus ------------------------------------------------------------------

    void storyCorpusIsSeededAndSized()
    {
        // Its speed is a benchmark (headlab-bench inputs), not a test.
        const std::string a = generateStoryCorpus(kDefaultStorySeed, 2'000'000);
        QCOMPARE(a.size(), size_t(2'000'000));
        QVERIFY(a == generateStoryCorpus(kDefaultStorySeed, 2'000'000));
        const std::string other = generateStoryCorpus(kDefaultStorySeed + 1, 2'000'000);
        QVERIFY(a != other);
        // A smaller corpus is the start of a larger one, and story i is the same in both.
        const std::string small = generateStoryCorpus(kDefaultStorySeed, 10'000);
        QVERIFY(a.compare(0, small.size(), small) == 0);
        QVERIFY(a.compare(0, generateStory(kDefaultStorySeed, 0).size(),
                          generateStory(kDefaultStorySeed, 0)) == 0);
        QCOMPARE(generateStoryCorpus(3, 0).size(), size_t(0));
    }

    void storyCorpusIsSimpleText()
    {
        const std::string text = generateStoryCorpus(5, 1'000'000);
        QCOMPARE(checkTextBytes(text, "stories", 256), std::string());
        std::set<std::string> words;
        std::string word;
        for (char ch : text) {
            QVERIFY2(static_cast<unsigned char>(ch) < 128, "the stories are ASCII");
            if (std::isalpha(static_cast<unsigned char>(ch)))
                word += static_cast<char>(std::tolower(ch));
            else if (!word.empty())
                words.insert(word), word.clear();
        }
        QVERIFY2(words.size() > 100 && words.size() < 500,
                 qPrintable(QString("%1 distinct words").arg(words.size())));
        QVERIFY(text.find("The end.") != std::string::npos);
        const std::string story = generateStory(5, 3);
        QVERIFY(story.size() > 100);
        QVERIFY(story.size() < 1500);
    }

    // --- the byte tokenizer ----------------------------------------------------------------

    void byteTokenizerRoundTrips_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<int>("firstToken");
        QTest::newRow("ascii") << QByteArray("Once upon a time.") << int('O');
        QTest::newRow("two-byte") << QByteArray("\xC3\xA9t\xC3\xA9") << 0xC3;          // été
        QTest::newRow("three-byte") << QByteArray("\xE6\x97\xA5\xE6\x9C\xAC") << 0xE6; // 日本
        QTest::newRow("four-byte") << QByteArray("\xF0\x9F\x99\x82!") << 0xF0;         // 🙂!
        QTest::newRow("newlines") << QByteArray("a\nb\r\n\tc") << int('a');
    }
    void byteTokenizerRoundTrips()
    {
        QFETCH(QByteArray, text);
        QFETCH(int, firstToken);
        const std::string bytes(text.constData(), static_cast<size_t>(text.size()));
        const auto tokens = encodeBytes(bytes);
        QCOMPARE(tokens.size(), bytes.size()); // one token per byte
        QCOMPARE(tokens.front(), int64_t(firstToken));
        for (auto t : tokens) QVERIFY(t >= 0 && t < kByteVocabSize);
        QCOMPARE(decodeBytes(tokens), bytes);
        QCOMPARE(firstInvalidUtf8(bytes), int64_t(-1));
        QCOMPARE(sanitizeUtf8(bytes), bytes);
    }

    void decodeRejectsNonBytes()
    {
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, decodeBytes({65, 256}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, decodeBytes({-1}));
    }

    void malformedUtf8IsFound_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<int>("offset");
        QTest::newRow("lone continuation") << QByteArray("ab\x80") << 2;
        QTest::newRow("truncated") << QByteArray("ok\xC3") << 2;
        QTest::newRow("overlong slash") << QByteArray("\xC0\xAF") << 0;
        QTest::newRow("surrogate") << QByteArray("x\xED\xA0\x80") << 1;
        QTest::newRow("above U+10FFFF") << QByteArray("\xF4\x90\x80\x80") << 0;
        QTest::newRow("latin-1") << QByteArray("caf\xE9!") << 3;
    }
    void malformedUtf8IsFound()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(int, offset);
        const std::string s(bytes.constData(), static_cast<size_t>(bytes.size()));
        QCOMPARE(firstInvalidUtf8(s), int64_t(offset));
        const std::string clean = sanitizeUtf8(s);
        QCOMPARE(firstInvalidUtf8(clean), int64_t(-1));
        QVERIFY(clean.find("\xEF\xBF\xBD") != std::string::npos);
    }

    // --- text files ----------------------------------------------------------------------

    void splitAndMinimumSize()
    {
        const TextSplit s = splitText(1000, 0.1);
        QCOMPARE(s.trainBytes, int64_t(900));
        QCOMPARE(s.validationBytes, int64_t(100));
        for (int64_t context : {2, 16, 128, 257}) {
            for (double fraction : {0.05, 0.1, 0.5, 0.9}) {
                const int64_t need = minimumTextBytes(context, fraction);
                const std::string fits(static_cast<size_t>(need), 'a');
                const std::string oneShort(static_cast<size_t>(need - 1), 'a');
                QCOMPARE(checkTextBytes(fits, "f", context, fraction), std::string());
                QVERIFY(!checkTextBytes(oneShort, "f", context, fraction).empty());
            }
        }
        QCOMPARE(minimumTextBytes(128, 0.1), int64_t(1290));
    }

    void badTextFilesGetTheirMessages_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QByteArray>("content"); // "-" : do not create it
        QTest::addColumn<QString>("expected");
        QTest::newRow("missing") << "missing.txt" << QByteArray("-")
                                 << "cannot be read: no such file";
        QTest::newRow("empty") << "empty.txt" << QByteArray("") << "is empty";
        QTest::newRow("binary") << "image.png" << QByteArray("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16)
                                << "looks binary: it has a NUL byte at offset 8 (line 3)";
        QTest::newRow("latin-1") << "latin1.txt" << QByteArray("line one\ncaf\xE9 au lait\n")
                                 << "is not UTF-8 text: byte 0xE9 at offset 12 (line 2)";
        QTest::newRow("too short")
            << "short.txt" << QByteArray("Once upon a time.\n")
            << "is too short for context length 128: it has 18 bytes, and with validation "
               "fraction 0.1 it needs at least 1290";
        QTest::newRow("directory")
            << "folder" << QByteArray("/") << "cannot be read: it is a directory";
    }
    void badTextFilesGetTheirMessages()
    {
        QFETCH(QString, file);
        QFETCH(QByteArray, content);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(file);
        if (content == "/")
            QVERIFY(QDir(dir.path()).mkdir(file));
        else if (content != "-")
            writeFile(path, std::string(content.constData(), static_cast<size_t>(content.size())));

        const std::string message = checkTextFile(path.toStdString(), 128, 0.1);
        QVERIFY2(message.find("text file '" + path.toStdString() + "'") != std::string::npos,
                 message.c_str());
        QVERIFY2(message.find(expected.toStdString()) != std::string::npos, message.c_str());

        // The task throws the same message, and the trainer turns it into a Failed run.
        TaskConfig task;
        task.kind = "text";
        task.textPath = path.toStdString();
        try {
            loadTextCorpus(task);
            QFAIL("loadTextCorpus accepted a bad file");
        } catch (const std::invalid_argument &e) {
            QCOMPARE(std::string(e.what()), message);
        }
        RunConfig run = tinyText(5);
        run.task.textPath = path.toStdString();
        run.task.contextLength = 128;
        const RunResult result = trainRun(run);
        QCOMPARE(name(result.status), name(RunStatus::Failed));
        QCOMPARE(result.message, message);
    }

    void goodFileLoads()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("story.txt");
        const std::string text = "Ünïcödé 🙂 " + generateStoryCorpus(9, 5000);
        writeFile(path, text);
        QCOMPARE(checkTextFile(path.toStdString(), 64), std::string());
        TaskConfig task;
        task.kind = "text";
        task.textPath = path.toStdString();
        task.contextLength = 64;
        QVERIFY(loadTextCorpus(task) == text);
    }

    void tinyShakespeareIsUsable()
    {
        const std::string path = sharedDataFile("tinyshakespeare.txt");
        if (!QFileInfo::exists(QString::fromStdString(path)))
            QSKIP("../shared/data/tinyshakespeare.txt is not here");
        QCOMPARE(checkTextFile(path, 256), std::string());
        RunConfig c = tinyText(30);
        c.task.textPath = path;
        c.evalEvery = 30;
        const RunResult r = trainRun(c);
        QVERIFY2(r.status == RunStatus::Done, r.message.c_str());
        QVERIFY(r.test.back().value < r.test.front().value);
    }

    // --- head schedules (core/config/HeadSchedule.h, helper-1's generators) -----------------------

    void headSchedules_data()
    {
        QTest::addColumn<QString>("scheme");
        QTest::addColumn<double>("total");
        QTest::addColumn<int>("dModel");
        QTest::addColumn<QList<int>>("expected");
        // The blog's design at d_model 768 and the workstation one at d_model 256, 4 layers.
        QTest::newRow("blog ascending 180")
            << "ascending" << 180.0 << 768 << QList<int>{12, 24, 48, 96};
        QTest::newRow("blog constant 180")
            << "constant" << 180.0 << 768 << QList<int>{48, 48, 48, 48};
        QTest::newRow("blog descending 180")
            << "descending" << 180.0 << 768 << QList<int>{96, 48, 24, 12};
        QTest::newRow("blog ascending 45")
            << "ascending" << 45.0 << 768 << QList<int>{3, 6, 12, 24};
        QTest::newRow("ascending 15") << "ascending" << 15.0 << 256 << QList<int>{1, 2, 4, 8};
        QTest::newRow("descending 30") << "descending" << 30.0 << 256 << QList<int>{16, 8, 4, 2};
        QTest::newRow("descending 60") << "descending" << 60.0 << 256 << QList<int>{32, 16, 8, 4};
        QTest::newRow("constant 16") << "constant" << 16.0 << 256 << QList<int>{4, 4, 4, 4};
        QTest::newRow("constant 60 snaps to 16")
            << "constant" << 60.0 << 256 << QList<int>{16, 16, 16, 16};
    }
    void headSchedules()
    {
        QFETCH(QString, scheme);
        QFETCH(double, total);
        QFETCH(int, dModel);
        QFETCH(QList<int>, expected);
        HeadScheme s = HeadScheme::Constant;
        QVERIFY(parseHeadScheme(scheme.toStdString(), &s));
        const auto heads = headSchedule(s, total, 4, dModel);
        QList<int> got;
        for (auto h : heads) got.append(static_cast<int>(h));
        QCOMPARE(got, expected);
        QCOMPARE(QString::fromStdString(headScheduleLabel(s, total)),
                 scheme + ":" + QString::number(total));
    }

    void everyGeneratedScheduleDividesDModel()
    {
        for (int64_t dModel : {96, 128, 256, 768}) {
            for (int64_t layers : {1, 2, 4, 6}) {
                for (double total = 1; total <= 200; total += 7) {
                    for (HeadScheme s :
                         {HeadScheme::Ascending, HeadScheme::Constant, HeadScheme::Descending}) {
                        const auto heads = headSchedule(s, total, layers, dModel);
                        QCOMPARE(static_cast<int64_t>(heads.size()), layers);
                        for (auto h : heads) QVERIFY(h >= 1 && dModel % h == 0);
                        if (s == HeadScheme::Ascending)
                            QVERIFY(std::is_sorted(heads.begin(), heads.end()));
                        if (s == HeadScheme::Descending)
                            QVERIFY(std::is_sorted(heads.rbegin(), heads.rend()));
                    }
                }
            }
        }
    }

    void divisibilityMessageNamesTheLayer()
    {
        RunConfig c = tinyText(1);
        c.model.dModel = 256;
        c.model.heads = {4, 4, 3, 8};
        const std::string message = validate(c);
        QVERIFY2(message.find("model.heads[2]") != std::string::npos, message.c_str());
        QVERIFY2(message.find("layer 2") != std::string::npos, message.c_str());
        QVERIFY2(message.find("3 heads do not divide d_model 256") != std::string::npos,
                 message.c_str());
        c.model.heads = {4, 4, 4, 8};
        QCOMPARE(validate(c), std::string());
        c.model.heads = {4, 4, 3, 8};
        c.model.headDim = 16; // explicit head dimension: any count is fine
        QCOMPARE(validate(c), std::string());
    }

    // --- the QK learning-rate rule (EXPERIMENTS.md §4) --------------------------------------

    void qkRuleFactors_data()
    {
        QTest::addColumn<bool>("enabled");
        QTest::addColumn<double>("reference");
        QTest::addColumn<int>("headDim"); // explicit; 0 derives d_model / heads = 64 / 4 = 16
        QTest::addColumn<double>("factor");
        QTest::newRow("off") << false << 8.0 << 0 << 1.0;
        QTest::newRow("m_H 16, m_ref 8") << true << 8.0 << 0 << std::sqrt(0.5);
        QTest::newRow("m_H 16, m_ref 16") << true << 16.0 << 0 << 1.0;
        QTest::newRow("m_H 2, m_ref 8") << true << 8.0 << 2 << 2.0;
        QTest::newRow("m_H 384, m_ref 8") << true << 8.0 << 384 << std::sqrt(8.0 / 384.0);
    }
    void qkRuleFactors()
    {
        QFETCH(bool, enabled);
        QFETCH(double, reference);
        QFETCH(int, headDim);
        QFETCH(double, factor);
        RunConfig c = tinyText(1);
        c.model.dModel = 64;
        c.model.heads = {4, 4};
        c.model.headDim = headDim;
        c.qkRule.enabled = enabled;
        c.qkRule.referenceHeadDim = reference;
        QCOMPARE(qkLearningRateFactor(c, 0), factor);
        QCOMPARE(qkLearningRateFactor(c, 1), factor);
        // η_QK · sqrt(m_H) is the same for every head dimension when the rule is on.
        if (enabled)
            QCOMPARE(c.lr * factor * std::sqrt(double(c.model.headDimOfLayer(0))),
                     c.lr * std::sqrt(reference));
    }

    // Adam's first step moves every weight by lr · g / (|g| + eps) ≈ lr · sign(g): W_Q and W_K of a
    // layer with head dimension m_H move by η · sqrt(m_ref / m_H), everything else by η.
    void qkRuleMovesQueryKeyWeightsByTheirFactor()
    {
        torch::manual_seed(0);
        RunConfig c = tinyText(1);
        c.model.dModel = 32;
        c.model.heads = {8, 2};          // head dimensions 4 and 16
        c.model.zeroInitOutputs = false; // else W_Q and W_K get no gradient on the first step
        c.qkRule = {true, 8.0};
        const double lr = 1e-3;
        const torch::Device cpu(torch::kCPU);
        Transformer model(c.model, kByteVocabSize, c.task.contextLength, 1, cpu);
        model.initializeRun(0, 3);
        auto &params = model.parameters();
        std::vector<double> perParamLr; // what the trainer gives each parameter: η, or η_QK
        for (const auto &p : params)
            perParamLr.push_back(p.isQueryKey ? lr * qkLearningRateFactor(c, size_t(p.layer)) : lr);
        std::vector<torch::Tensor> before;
        for (auto &p : params) before.push_back(p.value.detach().clone());
        const auto tokens = torch::randint(0, 256, {4, 33}, torch::kInt64);
        const auto loss =
            crossEntropyPerRun(model.forward(tokens.narrow(1, 0, 32)), tokens.narrow(1, 1, 32));
        loss.sum().backward();
        firstAdamStep(model, perParamLr);

        auto medianMove = [&](size_t i) {
            const auto moved = (params[i].value.detach() - before[i]).abs().flatten();
            const auto nonzero = moved.masked_select(moved > 0);
            return nonzero.numel() ? nonzero.median().item<double>() : 0.0;
        };
        int checked = 0;
        for (size_t i = 0; i < params.size(); ++i) {
            const std::string &n = params[i].name;
            const bool q = n.ends_with(".wq") || n.ends_with(".wk");
            if (!q && !n.ends_with(".wv")) continue;
            const double expected = q ? lr * qkLearningRateFactor(c, size_t(params[i].layer)) : lr;
            const double got = medianMove(i);
            QVERIFY2(std::abs(got - expected) < 0.02 * expected,
                     qPrintable(QString("%1 moved by %2, expected %3")
                                    .arg(QString::fromStdString(n))
                                    .arg(got)
                                    .arg(expected)));
            ++checked;
        }
        QCOMPARE(checked, 6);
        QCOMPARE(qkLearningRateFactor(c, 0), std::sqrt(2.0)); // m_H 4
        QCOMPARE(qkLearningRateFactor(c, 1), std::sqrt(0.5)); // m_H 16
    }

    // The trainer applies the rule: with m_ref equal to every layer's head dimension the rule
    // changes nothing; with another m_ref it changes the run.
    void trainerAppliesTheQkRule()
    {
        RunConfig off = tinyText(20);
        off.model.zeroInitOutputs = false;
        off.evalEvery = 20;
        off.task.sampleLength = 0;
        RunConfig neutral = off;
        neutral.qkRule = {true, 16.0}; // d_model 32 / 2 heads
        RunConfig scaled = off;
        scaled.qkRule = {true, 1.0};
        const auto results = trainEnsemble({off, neutral, scaled});
        QCOMPARE(results[0].test.back().value, results[1].test.back().value);
        QVERIFY(std::abs(results[0].test.back().value - results[2].test.back().value) > 1e-4);
    }

    // --- sampling ----------------------------------------------------------------------------

    void seededSamplingIsDeterministic()
    {
        ModelConfig m;
        m.dModel = 32;
        m.heads = {2, 2};
        m.zeroInitOutputs = false;
        const torch::Device cpu(torch::kCPU);
        Transformer model(m, kByteVocabSize, 16, 2, cpu);
        model.initializeRun(0, 11);
        model.initializeRun(1, 12);
        SampleOptions o;
        o.prompt = "Once \xC3\xA9";
        o.length = 60;
        o.temperature = 1.0;
        o.seed = 5;
        const std::string a = sampleText(model, cpu, 16, o, 1);
        QCOMPARE(sampleText(model, cpu, 16, o, 1), a);
        QVERIFY(a.rfind(o.prompt, 0) == 0);
        QCOMPARE(firstInvalidUtf8(a), int64_t(-1));
        QVERIFY(a.size() >= o.prompt.size() + 60);
        o.seed = 6;
        QVERIFY(sampleText(model, cpu, 16, o, 1) != a);
        // Run 1 of an ensemble samples as the same model trained alone would.
        o.seed = 5;
        Transformer alone(m, kByteVocabSize, 16, 1, cpu);
        alone.initializeRun(0, 12);
        QCOMPARE(sampleText(alone, cpu, 16, o, 0), a);
        // Temperature 0 takes the most likely byte: the seed does not matter.
        o.temperature = 0;
        const std::string greedy = sampleText(model, cpu, 16, o, 0);
        o.seed = 99;
        QCOMPARE(sampleText(model, cpu, 16, o, 0), greedy);
        // An empty prompt starts from a newline that is not returned.
        o.prompt.clear();
        o.length = 10;
        QVERIFY(!sampleText(model, cpu, 16, o, 0).empty());
    }

    // --- training ----------------------------------------------------------------------------

    void tinyTextRunTrains()
    {
        RunConfig c = tinyText(300);
        c.evalEvery = 100;
        const RunResult r = trainRun(c);
        QVERIFY2(r.status == RunStatus::Done, r.message.c_str());
        // The unembedding starts at zero: uniform over 256 bytes, loss ln 256 at step 0.
        QVERIFY(std::abs(r.test.front().value - std::log(256.0)) < 1e-4);
        const double final = r.metrics.at("final_test_loss");
        QVERIFY2(final < 2.6, qPrintable(QString("final validation loss %1").arg(final)));
        QCOMPARE(r.samples.size(), size_t(1));
        QVERIFY(r.samples[0].rfind("Once upon a time", 0) == 0);
        QVERIFY(r.samples[0].size() >= 16 + 40);
        qInfo("after 300 steps: validation loss %.3f; sample: %s", final, r.samples[0].c_str());
        // Its verdict: below 5/6 of the next byte's entropy given the byte before.
        const double chance = taskSpec("text").chancePlateau(c.task);
        QCOMPARE(r.metrics.at("left_chance_plateau"), final < 5.0 / 6.0 * chance ? 1.0 : 0.0);
        QCOMPARE(r.metrics.at("learned"), final < chance ? 1.0 : 0.0);
    }

    // The text task's chance plateau: what a model predicting from the current byte alone (a
    // transformer whose attention learned nothing) reaches, over the training split only.
    void chancePlateauIsTheNextByteEntropy()
    {
        QCOMPARE(nextByteEntropy(""), 0.0);
        QCOMPARE(nextByteEntropy("a"), 0.0);
        QCOMPARE(nextByteEntropy("abababab"), 0.0); // each byte decides the next
        // "aab" repeated: after an a comes a or b, equally often (2 of 3 pairs, ln 2 each); after
        // b always a.
        std::string aab;
        for (int i = 0; i < 3000; ++i) aab += "aab";
        QVERIFY(std::abs(nextByteEntropy(aab) - 2.0 / 3.0 * std::log(2.0)) < 1e-3);
        // Independent bytes, four equally likely: ln 4, whatever came before.
        std::string independent;
        uint64_t x = 12345;
        for (int i = 0; i < 400'000; ++i) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            independent += char('a' + (x >> 62));
        }
        QVERIFY(std::abs(nextByteEntropy(independent) - std::log(4.0)) < 1e-3);
        // The task's: of the training split alone. A file of "ab" repeats whose held-out tenth is
        // random bytes still scores 0; the figures draw the same line.
        QTemporaryDir dir;
        const std::string path = dir.filePath("ab.txt").toStdString();
        {
            std::ofstream out(path, std::ios::binary);
            for (int i = 0; i < 4500; ++i) out << "ab";
            out << independent.substr(0, 1000);
        }
        TaskConfig task;
        task.kind = "text";
        task.textPath = path;
        task.contextLength = 8;
        task.validationFraction = 0.1;
        QCOMPARE(taskSpec("text").chancePlateau(task), 0.0);
        const auto lines = taskSpec("text").plateaus(task);
        QCOMPARE(lines.size(), size_t(1));
        QCOMPARE(lines[0].loss, 0.0);
        // An unreadable file: no line, and the chance loss throws as loading does.
        task.textPath = dir.filePath("missing.txt").toStdString();
        QVERIFY(taskSpec("text").plateaus(task).empty());
        bool threw = false;
        try {
            taskSpec("text").chancePlateau(task);
        } catch (const std::invalid_argument &e) {
            threw = std::string(e.what()).find("missing.txt") != std::string::npos;
        }
        QVERIFY(threw);
    }

    // Head schedules of one width train as one ensemble (the head-progression preset's 18 runs
    // are one model on a GPU); each run must get what it would get alone.
    void ensembleOfHeadSchedulesMatchesRunsAlone()
    {
        RunConfig ascending = tinyText(12, 3);
        ascending.model.heads = headSchedule(HeadScheme::Ascending, 15, 4, 32); // 1, 2, 4, 8
        RunConfig descending = tinyText(12, 4);
        descending.model.heads = headSchedule(HeadScheme::Descending, 15, 4, 32); // 8, 4, 2, 1
        ascending.evalEvery = descending.evalEvery = 12;
        ascending.task.sampleLength = descending.task.sampleLength = 0;
        QCOMPARE(ensembleKey(ascending), ensembleKey(descending));
        const auto together = trainEnsemble({ascending, descending});
        const RunResult alone = trainRun(descending);
        QVERIFY2(together[1].status == RunStatus::Done, together[1].message.c_str());
        QVERIFY(std::abs(together[1].test.back().value - alone.test.back().value) < 1e-4);
        QVERIFY(std::abs(together[0].test.back().value - together[1].test.back().value) > 1e-6);
    }

    // Issue 76: a text run's heads are scored for their roles on random bytes repeated once
    // (TransformerLens's induction test): the second copy repeats the first, each of its queries
    // has an induction target, the bytes are the same at every evaluation, and a trained run logs
    // every head's induction score.
    void rolesAreScoredOnRepeatedRandomBytes()
    {
        RunConfig a = tinyText(15, 1);
        a.evalEvery = 15;
        a.task.sampleLength = 0;
        TextTask task(a, {7}, torch::Device(torch::kCPU));
        const ProbeInput roles = task.roleInput(1);
        QCOMPARE(roles.input.sizes().vec(), (std::vector<int64_t>{4, 32}));
        QVERIFY(torch::equal(roles.input.narrow(1, 0, 16), roles.input.narrow(1, 16, 16)));
        QVERIFY(torch::equal(task.roleInput(1).input, roles.input));
        const auto induction = rolePatterns(roles.input).at("induction");
        QVERIFY((induction.narrow(1, 16, 16).sum(-1) > 0).all().item<bool>());
        const RunResult r = trainRun(a);
        for (int64_t layer = 0; layer < 2; ++layer)
            for (int64_t head = 0; head < 2; ++head) {
                const auto curve = r.extra.find(headCurveName(layer, head, "induction"));
                QVERIFY2(curve != r.extra.end(), "no induction score logged");
                QVERIFY(std::isfinite(curve->second.back().value));
                QVERIFY(curve->second.back().value >= 0 && curve->second.back().value <= 1);
            }
    }

    // Runs with different data seeds draw different batches, and a run draws the same batches
    // alone as in an ensemble.
    void ensembleWithOwnDataSeedsMatchesRunsAlone()
    {
        RunConfig a = tinyText(15, 1);
        RunConfig b = tinyText(15, 2);
        a.evalEvery = b.evalEvery = 15;
        a.task.sampleLength = b.task.sampleLength = 0;
        const auto together = trainEnsemble({a, b});
        const RunResult aloneB = trainRun(b);
        QVERIFY(std::abs(together[1].test.back().value - aloneB.test.back().value) < 1e-4);
        QVERIFY(std::abs(together[0].train.front().value - together[1].train.front().value) > 1e-6);

        const torch::Device cpu(torch::kCPU);
        TextTask shared(a, {7, 7}, cpu);
        QCOMPARE(shared.batchAt(0, 4).sizes().vec(), (std::vector<int64_t>{4, 33}));
        TextTask own(a, {7, 8}, cpu);
        const auto batch = own.batchAt(5, 4);
        QCOMPARE(batch.sizes().vec(), (std::vector<int64_t>{2, 4, 33}));
        TextTask single(a, {8}, cpu);
        QVERIFY(torch::equal(single.batchAt(5, 4), batch[1]));
        QVERIFY(!torch::equal(own.batchAt(6, 4), batch));          // a new batch every step
        QVERIFY(!torch::equal(batch[0], batch[1]));                // a new batch for every seed
        QVERIFY(!torch::equal(own.batchAt(5, 4, "other"), batch)); // and for every phase
        // The offsets cover the training text evenly: each tenth gets 10 % ± 3 % of 4,000 draws.
        std::vector<int> deciles(10, 0);
        const int64_t range = single.trainBytes() - 32;
        for (int64_t step = 0; step < 500; ++step) {
            const auto offsets = single.offsetsAt(torch::tensor(step), 8, "train"); // (1, 8)
            for (int64_t row = 0; row < 8; ++row)
                deciles[static_cast<size_t>(offsets[0][row].item<int64_t>() * 10 / range)]++;
        }
        for (int d : deciles)
            QVERIFY2(d > 280 && d < 520, qPrintable(QString("a tenth got %1 of 4000").arg(d)));
        QCOMPARE(own.trainBytes() + own.validationBytes(), int64_t(200'000));
        QCOMPARE(own.validationBytes(), int64_t(20'000));
        QCOMPARE(own.validationWindows(), int64_t(128)); // eval_batches 2 × 64
    }
};

QTEST_GUILESS_MAIN(TestText)
#include "test_text.moc"
