// NearestNeighbourTask.cpp — seeded point clouds, farthest-point targets and the MSE × d loss.
#include "core/tasks/nearest_neighbour/NearestNeighbourTask.h"

#include "core/metrics/Metrics.h"
#include "core/model/Kernels.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace headlab {

namespace {

constexpr int64_t kMask32 = 0xffffffffLL;

uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

// x · c mod 2^32 for int64 tensors holding values in [0, 2^32): c is split into 16-bit halves so
// that no product leaves int64 (every intermediate stays below 2^49).
torch::Tensor mul32(const torch::Tensor &x, uint32_t c)
{
    const int64_t lo = c & 0xffff, hi = c >> 16;
    return (x * lo + torch::bitwise_and(x * hi, 0xffff) * 65536).bitwise_and_(kMask32);
}

// lowbias32 (C. Wellons' integer hash), a bijection of [0, 2^32).
torch::Tensor mix32(torch::Tensor x)
{
    x = torch::bitwise_xor(x, torch::bitwise_right_shift(x, 16));
    x = mul32(x, 0x7feb352dU);
    x = torch::bitwise_xor(x, torch::bitwise_right_shift(x, 15));
    x = mul32(x, 0x846ca68bU);
    return torch::bitwise_xor(x, torch::bitwise_right_shift(x, 16));
}

} // namespace

torch::Tensor NearestNeighbourTask::unitPoints(const torch::Tensor &seedKeys,
                                               const torch::Tensor &step,
                                               std::vector<int64_t> shape, bool *fused)
{
    // seedKeys: (R, 3) int64 in [0, 2^32); step: 0-dim int64; shape: (B, N, d) per run.
    torch::NoGradGuard noGrad;
    const int64_t R = seedKeys.size(0);
    int64_t count = 1;
    for (auto n : shape) count *= n;
    // One CUDA kernel on the GPU and one loop on the CPU do what follows (core/model/Kernels.h;
    // tests/cuda and test_nn compare them with it).
    auto kernel = fusedUnitPoints(seedKeys, step, count / shape.back(), shape.back());
    if (fused) *fused = kernel.has_value();
    if (kernel) {
        shape.insert(shape.begin(), R);
        return kernel->view(shape);
    }
    const auto s1 = seedKeys.select(1, 0).unsqueeze(1), s2 = seedKeys.select(1, 1).unsqueeze(1),
               s3 = seedKeys.select(1, 2).unsqueeze(1); // (R, 1) each
    // The (run, step) key pair, computed on the device from the step tensor.
    const auto k1 = mix32(
        (mix32(torch::bitwise_xor(step.bitwise_and(kMask32), s1)) + s2).bitwise_and_(kMask32));
    const auto k2 = mix32((k1 + s3).bitwise_and_(kMask32));
    // Two 32-bit draws per coordinate: counters 2e and 2e + 1.
    const auto counter = torch::arange(2 * count, seedKeys.options()).unsqueeze(0); // (1, 2·count)
    const auto bits =
        mix32((mix32(torch::bitwise_xor(counter, k1)) + k2).bitwise_and_(kMask32)); // (R, 2·count)
    // 24-bit uniforms in (0, 1), then Box–Muller: one standard normal per pair.
    const auto u =
        (torch::bitwise_right_shift(bits, 8).to(torch::kFloat32) + 0.5f) * (1.0f / 16777216.0f);
    const auto pairs = u.view({R, count, 2});
    const auto radius = torch::sqrt(-2.0f * torch::log(pairs.select(2, 0)));
    const auto normal =
        radius * torch::cos(pairs.select(2, 1) * static_cast<float>(2.0 * M_PI)); // (R, count)
    shape.insert(shape.begin(), R);
    const auto points = normal.view(shape); // (R, B, N, d)
    return points / points.norm(2, -1, true).clamp_min(1e-12);
}

torch::Tensor NearestNeighbourTask::seedKeys(const std::vector<uint64_t> &dataSeeds)
{
    std::vector<int64_t> keys;
    for (uint64_t seed : dataSeeds) {
        const uint64_t a = splitmix64(seed), b = splitmix64(a);
        keys.push_back(static_cast<int64_t>(a & 0xffffffffULL));
        keys.push_back(static_cast<int64_t>(a >> 32));
        keys.push_back(static_cast<int64_t>(b & 0xffffffffULL));
    }
    return torch::tensor(keys, torch::kInt64).view({static_cast<int64_t>(dataSeeds.size()), 3});
}

std::unique_ptr<Task> makeNearestNeighbourTask(const RunConfig &config,
                                               const std::vector<uint64_t> &dataSeeds,
                                               const std::string &device)
{
    return std::make_unique<NearestNeighbourTask>(config.task, dataSeeds, torch::Device(device),
                                                  config.evalBatches);
}

NearestNeighbourTask::NearestNeighbourTask(const TaskConfig &config,
                                           std::vector<uint64_t> dataSeeds,
                                           const torch::Device &device, int64_t evalBatches)
    : m_config(config)
    , m_device(device)
{
    if (dataSeeds.empty())
        throw std::invalid_argument("nearest-neighbour task: no runs (no data seeds)");
    if (config.numPoints < 2)
        throw std::invalid_argument("task.num_points: at least 2 points are needed");
    if (config.pointDim < 1) throw std::invalid_argument("task.point_dim: must be at least 1");
    m_seedKeys = seedKeys(dataSeeds).to(device);
    // The held-out set: drawn once on the CPU, so it is bit-identical on every device.
    const auto test = unitPoints(seedKeys({kTestSeed}), torch::zeros({}, torch::kInt64),
                                 {kTestSamples, config.numPoints, config.pointDim});
    const int64_t samples =
        evalBatches > 0 ? std::min(kTestSamples, evalBatches * kEvalChunk) : kTestSamples;
    m_testPoints = test[0].narrow(0, 0, samples).to(device);
    m_testTargets = farthestPointTargets(m_testPoints);
}

torch::Tensor NearestNeighbourTask::trainingPoints(const torch::Tensor &step,
                                                   int64_t batchSize) const
{
    return unitPoints(m_seedKeys, step, {batchSize, m_config.numPoints, m_config.pointDim},
                      &m_fusedPoints); // (R, B, N, d)
}

std::map<std::string, std::string> NearestNeighbourTask::paths() const
{
    return {{"fused_points", m_fusedPoints ? "on" : "off"}};
}

torch::Tensor NearestNeighbourTask::trainingPoints(int64_t step, int64_t batchSize) const
{
    return trainingPoints(torch::full({}, step, m_seedKeys.options()), batchSize);
}

torch::Tensor NearestNeighbourTask::farthestPointTargets(const torch::Tensor &points)
{
    torch::NoGradGuard noGrad;
    const auto gram = torch::matmul(points, points.transpose(-1, -2)); // (..., N, N): <x_i, x_j>
    // <x_i, x_i> = 1 is already the largest; +inf makes j ≠ i explicit.
    gram.diagonal(0, -2, -1).fill_(std::numeric_limits<float>::infinity());
    const auto index = gram.argmin(-1, /*keepdim=*/true); // (..., N, 1)
    std::vector<int64_t> expanded(points.sizes().begin(), points.sizes().end());
    return torch::take_along_dim(points, index.expand(expanded), -2); // (..., N, d)
}

torch::Tensor NearestNeighbourTask::squaredDistanceLoss(const torch::Tensor &prediction,
                                                        const torch::Tensor &target)
{
    // (R, B, N, d) → ||·||² per point (R, B, N) → mean over B and N (R)
    return (prediction - target).pow(2).sum(-1).mean({1, 2});
}

torch::Tensor NearestNeighbourTask::trainLoss(const Transformer &model, const PhaseConfig &phase,
                                              const torch::Tensor &step)
{
    return lossOfPoints(model, trainingPoints(step, phase.batchSize));
}

torch::Tensor NearestNeighbourTask::lossOfPoints(const Transformer &model,
                                                 const torch::Tensor &points) const
{
    const auto target = farthestPointTargets(points); // (R, B, N, d)
    const auto prediction = model.forward(points);    // (R, B, N, d)
    return squaredDistanceLoss(prediction, target);   // (R)
}

double NearestNeighbourTask::learnedThreshold() const
{
    static const double chance = taskSpec("nearest_neighbour").chancePlateau(TaskConfig{});
    return chance;
}

TaskEvaluation NearestNeighbourTask::evaluate(const Transformer &model)
{
    const int64_t R = model.runs(), M = m_testPoints.size(0);
    const int64_t N = m_config.numPoints, d = m_config.pointDim;
    torch::Tensor lossSum = torch::zeros({R}, m_testPoints.options());
    torch::Tensor hitSum = torch::zeros({R}, m_testPoints.options());
    for (int64_t start = 0; start < M; start += kEvalChunk) {
        const int64_t n = std::min(kEvalChunk, M - start);
        const auto points =
            m_testPoints.narrow(0, start, n).unsqueeze(0).expand({R, n, N, d}); // (R, n, N, d)
        const auto target = m_testTargets.narrow(0, start, n).unsqueeze(0).expand({R, n, N, d});
        const auto prediction = model.forward(points); // (R, n, N, d)
        lossSum += squaredDistanceLoss(prediction, target) * static_cast<double>(n);
        // The point a prediction retrieves: the closest of the N (for unit points, the largest
        // inner product). A hit when that point is the target.
        const auto retrieved =
            torch::matmul(prediction, points.transpose(-1, -2)).argmax(-1);             // (R, n, N)
        const auto wanted = torch::matmul(target, points.transpose(-1, -2)).argmax(-1); // (R, n, N)
        hitSum += (retrieved == wanted).to(torch::kFloat32).mean({1, 2}) * static_cast<double>(n);
    }
    TaskEvaluation out;
    out.loss = lossSum / static_cast<double>(M);
    out.extra[metric::kTestAccuracy] = hitSum / static_cast<double>(M);
    return out;
}

ProbeInput NearestNeighbourTask::probeInput(const std::string &text, int64_t runs) const
{
    uint64_t seed = 0;
    try {
        size_t used = 0;
        seed = std::stoull(text, &used);
        if (used != text.size()) throw std::invalid_argument(text);
    } catch (const std::exception &) {
        throw std::invalid_argument("'" + text +
                                    "': expected a seed (a whole number) for the point set");
    }
    const auto points = unitPoints(seedKeys({seed}), torch::zeros({}, torch::kInt64),
                                   {1, m_config.numPoints, m_config.pointDim}); // (1, 1, N, d)
    ProbeInput out;
    out.input = points.expand({runs, 1, m_config.numPoints, m_config.pointDim}).to(m_device);
    for (int64_t i = 0; i < m_config.numPoints; ++i) out.labels.push_back("x" + std::to_string(i));
    out.description = "point set of seed " + std::to_string(seed) + " (" +
                      std::to_string(m_config.numPoints) + " points)";
    return out;
}

ProbeInput NearestNeighbourTask::statsInput(int64_t runs) const
{
    ProbeInput out;
    const int64_t M = std::min<int64_t>(256, m_testPoints.size(0));
    out.input = m_testPoints.narrow(0, 0, M).unsqueeze(0).expand(
        {runs, M, m_config.numPoints, m_config.pointDim});
    for (int64_t i = 0; i < m_config.numPoints; ++i) out.labels.push_back("x" + std::to_string(i));
    out.description = "256 test point sets";
    return out;
}

} // namespace headlab
