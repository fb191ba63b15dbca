// TextTask.cpp — batches, next-byte loss and validation of the text task; seeded sampling.
#include "core/tasks/text/TextTask.h"

#include "core/schema/text/TextCorpus.h"

#include "core/config/Hash.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace headlab {

namespace {

constexpr int64_t kHashMask = (int64_t(1) << 31) - 1;

uint64_t splitmix64(uint64_t &state)
{
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// Uniform in [0, 1) with 53 bits.
double unit(uint64_t &state)
{
    return static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53;
}

torch::Tensor tokensOf(const std::string &bytes, size_t begin, size_t count)
{
    auto t = torch::empty({static_cast<int64_t>(count)}, torch::kInt64);
    auto *p = t.data_ptr<int64_t>();
    for (size_t i = 0; i < count; ++i) p[i] = static_cast<unsigned char>(bytes[begin + i]);
    return t;
}

} // namespace

std::unique_ptr<Task> makeTextTask(const RunConfig &config, const std::vector<uint64_t> &dataSeeds,
                                   const std::string &device)
{
    return std::make_unique<TextTask>(config, dataSeeds, torch::Device(device));
}

TextTask::TextTask(const RunConfig &config, const std::vector<uint64_t> &dataSeeds,
                   const torch::Device &device)
    : m_context(config.task.contextLength)
    , m_device(device)
{
    const TaskConfig &task = config.task;
    if (m_context < 2)
        throw std::invalid_argument("task.context_length: must be at least 2, got " +
                                    std::to_string(m_context));
    if (task.sampleLength < 0)
        throw std::invalid_argument("task.sample_length: must not be negative");
    if (task.sampleCount < 0)
        throw std::invalid_argument("task.sample_count: must not be negative");
    if (!std::isfinite(task.sampleTemperature) || task.sampleTemperature < 0)
        throw std::invalid_argument("task.sample_temperature: must be 0 or more");
    const std::string bytes = loadTextCorpus(task); // throws with the file's problem
    m_chancePlateau = trainingNextByteEntropy(bytes, task.validationFraction); // chancePlateau's
    const TextSplit split = splitText(static_cast<int64_t>(bytes.size()), task.validationFraction);
    m_train = tokensOf(bytes, 0, static_cast<size_t>(split.trainBytes)).to(device);
    const auto validation = tokensOf(bytes, static_cast<size_t>(split.trainBytes),
                                     static_cast<size_t>(split.validationBytes));
    m_validation = validation.to(device);
    m_window = torch::arange(m_context + 1, torch::TensorOptions().dtype(torch::kInt64)).to(device);

    // Consecutive windows: window w holds bytes [w·T, w·T + T], so every held-out byte after the
    // first is predicted once. Spread evenly over the validation text when capped.
    const int64_t available = (split.validationBytes - 1) / m_context;
    int64_t count = std::min(available, kMaxValidationWindows);
    if (config.evalBatches > 0) count = std::min(count, config.evalBatches * kValidationChunk);
    count = std::max<int64_t>(count, 1);
    auto starts = torch::empty({count}, torch::kInt64);
    for (int64_t w = 0; w < count; ++w)
        starts.data_ptr<int64_t>()[w] = (w * available / count) * m_context;
    m_validationWindows =
        validation.index({starts.unsqueeze(1) + torch::arange(m_context + 1).unsqueeze(0)})
            .to(device);

    m_sharedData = std::all_of(dataSeeds.begin(), dataSeeds.end(),
                               [&](uint64_t s) { return s == dataSeeds.front(); });
    std::vector<int64_t> keys;
    for (uint64_t seed : dataSeeds) {
        uint64_t state = seed;
        keys.push_back(static_cast<int64_t>(splitmix64(state) & kHashMask));
        if (m_sharedData) break;
    }
    m_seedKeys = torch::tensor(keys, torch::kInt64).to(device);
}

int64_t TextTask::vocabSize() const
{
    return kByteVocabSize;
}
int64_t TextTask::maxPositions() const
{
    return m_context;
}

torch::Tensor TextTask::offsetsAt(const torch::Tensor &step, int64_t batchSize,
                                  const std::string &phaseName) const
{
    // A hash in [0, 2^31) of (seed key, phase, step, row): a linear mix, then rounds of a 31-bit
    // LCG and an xor-shift (both bijections). Every product stays below 2^63: no overflow.
    const uint64_t phaseKey = fnv1a(phaseName);
    const auto rows = torch::arange(batchSize, m_seedKeys.options()); // (B)
    auto x = m_seedKeys.unsqueeze(1) * 40503 + step.remainder(kHashMask + 1) * 2654435 +
             rows.unsqueeze(0) * 97 + static_cast<int64_t>(phaseKey & kHashMask); // (S, B)
    x = x.bitwise_and(kHashMask);
    for (int round = 0; round < 4; ++round) {
        x = (x * 1103515245 + 12345).bitwise_and(kHashMask);
        x = x.bitwise_xor(x.div(65536, "floor"));
    }
    const int64_t range = m_train.size(0) - m_context; // offsets 0 .. N_train − T − 1
    return x.remainder(range);
}

torch::Tensor TextTask::batchAt(const torch::Tensor &step, int64_t batchSize,
                                const std::string &phaseName) const
{
    const auto index =
        offsetsAt(step, batchSize, phaseName).unsqueeze(-1) + m_window; // (S, B, T+1)
    const auto windows = m_train.index({index});                        // (S, B, T+1)
    return m_sharedData ? windows.squeeze(0) : windows;
}

torch::Tensor TextTask::batchAt(int64_t step, int64_t batchSize, const std::string &phaseName) const
{
    return batchAt(torch::tensor(step, torch::kInt64).to(m_device), batchSize, phaseName);
}

torch::Tensor TextTask::trainLoss(const Transformer &model, const PhaseConfig &phase,
                                  const torch::Tensor &step)
{
    const auto batch = batchAt(step, phase.batchSize, phase.name); // (R, B, T+1) or (B, T+1)
    const int64_t timeDim = batch.dim() - 1;
    const auto input = batch.narrow(timeDim, 0, m_context);           // (.., B, T)
    const auto target = batch.narrow(timeDim, 1, m_context);          // (.., B, T)
    return trainingCrossEntropy(model, model.forward(input), target); // logits (R, B, T, 256) → (R)
}

TaskEvaluation TextTask::evaluate(const Transformer &model)
{
    const int64_t W = m_validationWindows.size(0);
    torch::Tensor sum;
    for (int64_t start = 0; start < W; start += kValidationChunk) {
        const int64_t n = std::min(kValidationChunk, W - start);
        const auto chunk = m_validationWindows.narrow(0, start, n);       // (n, T+1)
        const auto logits = model.forward(chunk.narrow(1, 0, m_context)); // (R, n, T, 256)
        const auto loss =
            crossEntropyPerRun(logits, chunk.narrow(1, 1, m_context)) * static_cast<double>(n);
        sum = sum.defined() ? sum + loss : loss;
    }
    TaskEvaluation out;
    out.loss = sum / static_cast<double>(W); // (R)
    return out;
}

std::vector<std::string> TextTask::finalSamples(const Transformer &model, int64_t run,
                                                const RunConfig &config)
{
    std::vector<std::string> samples;
    const TaskConfig &task = config.task;
    if (task.sampleLength <= 0) return samples;
    for (int64_t k = 0; k < task.sampleCount; ++k) {
        SampleOptions options;
        options.prompt = task.samplePrompt;
        options.length = task.sampleLength;
        options.temperature = task.sampleTemperature;
        options.seed = task.sampleSeed + static_cast<uint64_t>(k);
        samples.push_back(sampleText(model, m_device, m_context, options, run));
    }
    return samples;
}

std::string sampleText(const Transformer &model, const torch::Device &device, int64_t maxPositions,
                       const SampleOptions &options, int64_t run)
{
    torch::NoGradGuard noGrad;
    if (model.vocabSize() != kByteVocabSize)
        throw std::invalid_argument("sampleText: the model's vocabulary is " +
                                    std::to_string(model.vocabSize()) +
                                    ", not the 256 bytes of a text model");
    if (run < 0 || run >= model.runs())
        throw std::invalid_argument("sampleText: run " + std::to_string(run) +
                                    " is not in an ensemble of " + std::to_string(model.runs()));
    const bool fromNewline = options.prompt.empty();
    std::vector<int64_t> tokens = encodeBytes(fromNewline ? std::string("\n") : options.prompt);
    uint64_t state = options.seed ^ 0x5a3b1e5eed5a3b1eull;
    std::vector<double> probabilities(kByteVocabSize);
    for (int64_t i = 0; i < options.length; ++i) {
        const int64_t T = std::min<int64_t>(static_cast<int64_t>(tokens.size()),
                                            maxPositions > 0 ? maxPositions : INT64_MAX);
        const auto context =
            torch::from_blob(tokens.data() + tokens.size() - static_cast<size_t>(T), {1, T},
                             torch::kInt64)
                .to(device); // (1, T) shared by the runs
        const auto logits = model.forward(context, /*lastOnly=*/true)[run]
                                .reshape({kByteVocabSize}) // (256)
                                .to(torch::kCPU, torch::kFloat64);
        const double *z = logits.data_ptr<double>();
        int64_t next = 0;
        if (options.temperature <= 0) {
            next = std::max_element(z, z + kByteVocabSize) - z;
        } else {
            const double top = *std::max_element(z, z + kByteVocabSize);
            double total = 0;
            for (int64_t v = 0; v < kByteVocabSize; ++v)
                total += probabilities[v] = std::exp((z[v] - top) / options.temperature);
            double u = unit(state) * total;
            next = kByteVocabSize - 1;
            for (int64_t v = 0; v < kByteVocabSize; ++v) {
                u -= probabilities[v];
                if (u < 0) {
                    next = v;
                    break;
                }
            }
        }
        tokens.push_back(next);
    }
    std::string text = decodeBytes(tokens);
    if (fromNewline) text.erase(0, 1);
    return sanitizeUtf8(text);
}

namespace {

std::vector<std::string> byteLabels(const torch::Tensor &tokens) // (T) int64 on the CPU
{
    std::vector<std::string> labels;
    for (int64_t k = 0; k < tokens.size(0); ++k) {
        const int64_t b = tokens[k].item<int64_t>();
        char label[8];
        if (b == '\n')
            std::snprintf(label, sizeof label, "\\n");
        else if (b >= 32 && b < 127)
            std::snprintf(label, sizeof label, "%c", static_cast<char>(b));
        else
            std::snprintf(label, sizeof label, "\\x%02x", static_cast<unsigned>(b));
        labels.push_back(label);
    }
    return labels;
}

} // namespace

ProbeInput TextTask::probeInput(const std::string &text, int64_t) const
{
    if (text.empty())
        throw std::invalid_argument("type a prompt: the heads are shown on its bytes");
    const std::string prompt =
        text.size() > size_t(m_context) ? text.substr(text.size() - size_t(m_context)) : text;
    std::vector<int64_t> bytes;
    for (unsigned char c : prompt) bytes.push_back(c);
    const auto tokens = torch::tensor(bytes, torch::kInt64);
    ProbeInput out;
    out.input = tokens.unsqueeze(0).to(m_train.device());
    out.labels = byteLabels(tokens);
    out.vocabulary = byteLabels(torch::arange(256, torch::kInt64));
    out.focusRow = tokens.size(0) - 1; // the position that predicts the next byte
    out.description =
        "prompt of " + std::to_string(bytes.size()) + " bytes" +
        (prompt.size() < text.size() ? " (its last " + std::to_string(m_context) + ", the context)"
                                     : "");
    return out;
}

ProbeInput TextTask::statsInput(int64_t) const
{
    // Two validation windows: T² attention entries per head are many at long contexts.
    ProbeInput out;
    const int64_t n = std::min<int64_t>(2, m_validationWindows.size(0));
    out.input = m_validationWindows.narrow(0, 0, n).narrow(1, 0, m_context);
    out.labels = byteLabels(out.input[0].to(torch::kCPU));
    out.focusRow = m_context - 1;
    out.description = "two validation windows";
    return out;
}

ProbeInput TextTask::roleInput(int64_t) const
{
    // Four sequences of random bytes, each repeated once to fill the context (TransformerLens's
    // induction test): the second copy's tokens all came before, followed by what comes next.
    // The same bytes at every evaluation and for every run (a fixed seed).
    const int64_t half = std::max<int64_t>(1, m_context / 2);
    auto generator = at::make_generator<at::CPUGeneratorImpl>(76);
    const auto random = torch::randint(0, 256, {4, half}, generator, torch::kLong);
    ProbeInput out;
    out.input = torch::cat({random, random}, 1).to(m_validationWindows.device());
    out.labels = byteLabels(out.input[0].to(torch::kCPU));
    out.description = "random bytes, repeated";
    return out;
}

std::string TextTask::exampleProbeText() const
{
    std::string text;
    const auto bytes =
        m_validation.narrow(0, 0, std::min<int64_t>(48, m_validation.size(0))).to(torch::kCPU);
    for (int64_t k = 0; k < bytes.size(0); ++k) text += static_cast<char>(bytes[k].item<int64_t>());
    return text;
}

} // namespace headlab
