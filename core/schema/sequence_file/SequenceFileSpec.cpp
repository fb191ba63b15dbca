// SequenceFileSpec.cpp — the sequence-file task's row in the task table: a task a researcher
// defines in a file of examples, without C++ (SequenceFile.h). Torch-free.
//
// Its options are kept by name in TaskConfig::options (the built-in tasks' are members), read,
// checked and written by the rows below:
//   path           the examples file (CSV or tab-separated text); relative to the session file
//   tokens         characters (default) or words: how prompts are split
//   test_fraction  the share of examples held out for the test loss (default 0.2)
//   plateau_lines  draw the lines k/G · ln K, K distinct answers, G groups (default false)
#include "core/schema/TaskSpec.h"
#include "core/schema/sequence_file/SequenceFile.h"

#include <cmath>

namespace headlab {

namespace {

const char *kPath = "path", *kTokens = "tokens", *kTestFraction = "test_fraction",
           *kPlateauLines = "plateau_lines";

std::string option(const TaskConfig &task, const char *key, const std::string &fallback)
{
    const auto it = task.options.find(key);
    return it == task.options.end() ? fallback : it->second;
}

// A row kept in TaskConfig::options as text: `read` checks the YAML value and gives its
// canonical text; the row writes it back as `write` says (a number or bool unquoted).
Field<TaskConfig> optionRow(const char *key, std::string fallback, std::string help,
                            std::string (*read)(const yaml::YamlField &), bool quoted)
{
    return {{key},
            std::move(help),
            Sharing::Shared,
            [key, read](const yaml::YamlField &map, TaskConfig &task) {
                task.options[key] = read(yaml::child(map, key));
            },
            [key, fallback, quoted](YAML::Emitter &out, const TaskConfig &task) {
                out << YAML::Key << key << YAML::Value;
                const std::string value = option(task, key, fallback);
                if (quoted)
                    yaml::writeText(out, value);
                else
                    out << value;
            }};
}

// `path`: the examples file, relative to the session file's directory; re-anchored (made absolute)
// when the session is written to another directory.
Field<TaskConfig> pathRow()
{
    Field<TaskConfig> row = optionRow(
        kPath, "",
        "the examples file: CSV (prompt,answer[,group]) or PROMPT<tab>ANSWER[<tab>GROUP] lines",
        [](const yaml::YamlField &f) {
            const std::string path = yaml::readString(f);
            if (path.empty()) yaml::fail(f, "needs the examples file's path");
            return path;
        },
        true);
    row.mapPath = [](TaskConfig &task, const std::function<std::string(const std::string &)> &map) {
        if (auto it = task.options.find(kPath); it != task.options.end())
            it->second = map(it->second);
    };
    // A session that names no file yet (its runs are skipped until it does) is written without the
    // key: `path: ""` would not read back (found by the fuzzer: tests/fuzz/regressions/).
    row.write = [write = row.write](YAML::Emitter &out, const TaskConfig &task) {
        if (!option(task, kPath, "").empty()) write(out, task);
    };
    return row;
}

} // namespace

namespace sequencefile {

Tokens tokensOf(const TaskConfig &task)
{
    return option(task, kTokens, "characters") == "words" ? Tokens::Words : Tokens::Characters;
}

double testFractionOf(const TaskConfig &task)
{
    double fraction = 0.2;
    yaml::parseNumber(option(task, kTestFraction, "0.2"), &fraction);
    return fraction;
}

std::string pathOf(const TaskConfig &task)
{
    return resolveTaskPath(task, option(task, kPath, ""));
}

// The task's data, or nullptr when the file cannot be read (check() says why).
std::shared_ptr<const Data> dataOf(const TaskConfig &task)
{
    try {
        return load(pathOf(task), tokensOf(task), testFractionOf(task));
    } catch (const std::exception &) {
        return nullptr;
    }
}

} // namespace sequencefile

namespace {

using namespace sequencefile;

std::string checkSequenceFile(const RunConfig &c)
{
    if (option(c.task, kPath, "").empty())
        return "task.path: the examples file is missing (task kind sequence_file)";
    try {
        const auto data = load(pathOf(c.task), tokensOf(c.task), testFractionOf(c.task));
        if (data->sequenceLength() > RunLimits::kMaxContextLength)
            return "task.path: " + beyondLimit(RunLimits::kMaxContextLength, data->sequenceLength(),
                                               "tokens per sequence");
    } catch (const FileError &e) {
        return std::string("task.path: ") + e.what();
    }
    return {};
}

std::vector<PlateauLine> plateausOf(const TaskConfig &task)
{
    const auto data = dataOf(task);
    if (!data || option(task, kPlateauLines, "false") != "true" || data->distinctAnswers < 2)
        return {};
    const int64_t G = std::max<int64_t>(1, int64_t(data->groups.size()));
    const double lnK = std::log(double(data->distinctAnswers));
    std::vector<PlateauLine> lines;
    for (int64_t k = G; k >= 1; --k) {
        const std::string label = k == G ? "ln " + std::to_string(data->distinctAnswers)
                                         : std::to_string(k) + "/" + std::to_string(G) + " ln " +
                                               std::to_string(data->distinctAnswers);
        lines.push_back({double(k) / double(G) * lnK, label});
    }
    return lines;
}

} // namespace

const TaskSpec &sequenceFileTask()
{
    static const TaskSpec spec = {
        .id = "sequence_file",
        .title = "Sequences from a file of examples",
        .inputHelp = "a prompt of the file's tokens, as its examples write them",
        .objectives = {Objective::NextToken, Objective::Answer},
        .options =
            {
                pathRow(),
                optionRow(
                    kTokens, "characters", "characters or words: how prompts are split into tokens",
                    [](const yaml::YamlField &f) {
                        const std::string text = yaml::readString(f);
                        if (text != "characters" && text != "words")
                            yaml::failUnknownName(f, {"characters", "words"});
                        return text;
                    },
                    false),
                optionRow(
                    kTestFraction, "0.2", "the share of examples held out for the test loss",
                    [](const yaml::YamlField &f) {
                        return yaml::formatNumber(yaml::readNumberInRange(f, 0, false, 1, false));
                    },
                    false),
                optionRow(
                    kPlateauLines, "false",
                    "draw the plateau lines k/G · ln K (K answers, G groups)",
                    [](const yaml::YamlField &f) {
                        return std::string(yaml::readBool(f) ? "true" : "false");
                    },
                    false),
            },
        .vocabSize =
            [](const TaskConfig &t) {
                const auto data = dataOf(t);
                return data ? int64_t(data->vocabulary.size()) : int64_t(0);
            },
        .sequenceLength =
            [](const TaskConfig &t) {
                const auto data = dataOf(t);
                return data ? data->sequenceLength() : int64_t(2);
            },
        // The test share (evaluated in evaluationChunk passes); every example's tokens.
        .footprint =
            [](const TaskConfig &t) {
                const auto data = dataOf(t);
                if (!data) return TaskSpec::Footprint{};
                return TaskSpec::Footprint{int64_t(data->testOrder.size()),
                                           int64_t(data->tokens.size()) * 8 +
                                               data->examples() *
                                                   16}; // int64 tensors on the device
            },
        .learnedMeaning =
            "final test loss below ln K, K the distinct answers (guessing among them)",
        .plateaus = plateausOf,
        .initialLoss =
            [](const TaskConfig &t) {
                const auto data = dataOf(t);
                return data ? std::log(double(data->vocabulary.size())) : 0.0;
            },
        .extraCurves = {"test_group_"},
        .metrics = {{"test_group_", true, true, "test loss of group g", "nats",
                     "sequence_file: the test loss of the examples of group g (in order of first "
                     "appearance)"}},
        .groupCurvePrefix = "test_group_",
        .groupWord = "group",
        .groups =
            [](const TaskConfig &t) {
                const auto data = dataOf(t);
                return data ? data->groups : std::vector<std::string>{};
            },
        .producesSamples = false,
        .check = checkSequenceFile,
    };
    return spec;
}

} // namespace headlab
