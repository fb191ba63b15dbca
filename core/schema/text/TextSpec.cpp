// TextSpec.cpp — the text task's row in the task table (EXPERIMENTS.md §3): byte-level language
// modelling. Torch-free.
#include "core/schema/TaskSpec.h"

#include "core/schema/text/TextCorpus.h"

#include <cmath>
#include <limits>

namespace headlab {

const TaskSpec &textTask()
{
    // The sampling options say what to generate from each finished run's model: they may differ
    // between the runs of one ensemble.
    static const TaskSpec spec = {
        .id = "text",
        .title = "Byte-level language modelling (EXPERIMENTS.md §3)",
        .inputHelp = "a text prompt (bytes), e.g. \"Once upon a time\"",
        .objectives = {Objective::NextToken},
        .options =
            {
                fields::text("text_path", &TaskConfig::textPath,
                             "a UTF-8 text file; empty: the built-in story corpus"),
                fields::integer("context_length", &TaskConfig::contextLength, 2,
                                RunLimits::kMaxContextLength, "bytes per training sequence"),
                fields::number(
                    "validation_fraction", &TaskConfig::validationFraction,
                    [](const yaml::YamlField &f) {
                        return yaml::readNumberInRange(f, 0.0, false, 1.0, false);
                    },
                    "the held-out tail of the text"),
                fields::integer("corpus_bytes", &TaskConfig::corpusBytes, 1,
                                RunLimits::kMaxCorpusBytes, "size of the generated story corpus"),
                fields::text("sample_prompt", &TaskConfig::samplePrompt,
                             "the prompt of each sample", Sharing::PerRun),
                fields::integer("sample_length", &TaskConfig::sampleLength, 0,
                                RunLimits::kMaxSampleLength,
                                "bytes generated per sample; 0: no samples", Sharing::PerRun),
                fields::integer("sample_count", &TaskConfig::sampleCount, 0,
                                RunLimits::kMaxSampleCount, "samples per run", Sharing::PerRun),
                fields::number(
                    "sample_temperature", &TaskConfig::sampleTemperature,
                    [](const yaml::YamlField &f) {
                        return yaml::readNumberInRange(
                            f, 0, true, std::numeric_limits<double>::infinity(), false);
                    },
                    "0: always the most likely byte", Sharing::PerRun),
                fields::unsignedInteger("sample_seed", &TaskConfig::sampleSeed,
                                        "seed of the first sample", Sharing::PerRun),
            },
        .vocabSize = [](const TaskConfig &) { return kByteVocabSize; },
        .sequenceLength = [](const TaskConfig &t) { return t.contextLength; },
        .learnedMeaning = "the session's learned_rule: by default the validation loss fell below "
                          "5/6 of the next byte's entropy given the byte before (what a model "
                          "whose attention learned nothing reaches)",
        .chancePlateau = trainingNextByteEntropy,
        .plateaus =
            [](const TaskConfig &t) {
                try {
                    return std::vector<PlateauLine>{
                        {trainingNextByteEntropy(t), "next byte given the last"}};
                } catch (const std::exception &) { // a file that cannot be read: no line
                    return std::vector<PlateauLine>{};
                }
            },
        .initialLoss = nullptr,
        .extraCurves = {},
        .producesSamples = true,
    };
    return spec;
}

} // namespace headlab
