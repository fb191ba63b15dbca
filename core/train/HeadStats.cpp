// HeadStats.cpp — see HeadStats.h.
#include "core/train/HeadStats.h"

#include "core/metrics/Metrics.h"
#include "core/model/HeadRoles.h"

#include <stdexcept>

namespace headlab {

namespace {
// The probe's capture a Probe row names.
const std::vector<torch::Tensor> &capture(const HeadProbe &probe, const std::string &of)
{
    if (of == "logit_rms") return probe.logitRms;
    if (of == "logit_max") return probe.logitMax;
    if (of == "entropy") return probe.entropy;
    throw std::logic_error("headStatTable: the attention probe captures no '" + of + "'");
}
} // namespace

torch::Tensor headStatsOfLayer(const Transformer &model, const HeadProbe &probe, size_t layer,
                               const std::function<torch::Tensor(const std::string &of)> &gradient)
{
    const auto norms = model.headNorms(layer, false);
    const torch::Tensor like = norms.at("wq"); // (R, heads)
    const auto missing = [&] { return torch::full_like(like, std::nan("")); };
    std::vector<torch::Tensor> columns;
    for (const auto &row : headStatTable()) {
        torch::Tensor value;
        switch (row.source) {
        case HeadStatSource::Probe: {
            const auto &captured = capture(probe, row.of);
            if (layer < captured.size()) value = captured[layer];
            break;
        }
        case HeadStatSource::Weight:
            value = norms.at(row.of);
            break;
        case HeadStatSource::Gradient:
            if (gradient) value = gradient(row.of);
            break;
        case HeadStatSource::Alignment: {
            const auto found = probe.alignment.find(row.of);
            if (found != probe.alignment.end() && layer < found->second.size())
                value = found->second[layer];
            break;
        }
        case HeadStatSource::Role: {
            const auto found = probe.roles.find(row.of);
            if (found != probe.roles.end() && layer < found->second.size())
                value = found->second[layer];
            break;
        }
        }
        columns.push_back(value.defined() ? value.to(like.dtype()) : missing());
    }
    return torch::stack(columns, 2);
}

bool probeHeadStats(const Transformer &model, const Task &task, int64_t runs, HeadProbe &probe)
{
    const ProbeInput stats = task.statsInput(runs);
    if (!stats.input.defined()) return false;
    // The roles on the statistics batch, or on a role batch of their own in a second pass.
    const ProbeInput roles = task.roleInput(runs);
    probe.captureStats = true;
    probe.captureRoles = !roles.input.defined();
    if (probe.captureRoles) probe.patterns = rolePatterns(stats.input);
    model.forward(stats.input, false, probe);
    if (!probe.captureRoles) {
        HeadProbe roleProbe;
        roleProbe.captureRoles = true;
        roleProbe.patterns = rolePatterns(roles.input);
        model.forward(roles.input, false, roleProbe);
        probe.roles = std::move(roleProbe.roles);
    }
    return true;
}

} // namespace headlab
