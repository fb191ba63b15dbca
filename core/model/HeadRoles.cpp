// HeadRoles.cpp — see HeadRoles.h.
#include "core/model/HeadRoles.h"

namespace headlab {

std::map<std::string, torch::Tensor> rolePatterns(const torch::Tensor &tokens)
{
    std::map<std::string, torch::Tensor> out;
    if (!tokens.defined() || tokens.dim() != 2 || tokens.is_floating_point()) return out;
    const int64_t T = tokens.size(1);
    // Positions on the tokens' device, so the patterns are there too.
    const auto position = torch::arange(T, tokens.options().dtype(torch::kLong));
    const auto query = position.view({T, 1}), key = position.view({1, T});
    const auto before = (key < query).to(torch::kFloat32); // (T, T)
    // previous_token: the key one before the query.
    out["previous_token"] = (key == query - 1).to(torch::kFloat32).expand({tokens.size(0), T, T});
    // duplicate_token: an earlier key with the query's token.
    const auto same = (tokens.unsqueeze(2) == tokens.unsqueeze(1)).to(torch::kFloat32); // (B,T,T)
    out["duplicate_token"] = same * before;
    // induction: key k whose previous token k − 1 is the query's token, k − 1 before the query.
    // Shifting the duplicate pattern one key right: column k takes column k − 1.
    auto induction = torch::zeros_like(same);
    if (T > 1) induction.narrow(2, 1, T - 1).copy_(out["duplicate_token"].narrow(2, 0, T - 1));
    out["induction"] = induction;
    return out;
}

torch::Tensor patternScore(const torch::Tensor &weights, const torch::Tensor &pattern)
{
    // weights (R, B, h, Tq, T); pattern (B, Tq, T).
    const auto p = pattern.to(weights.device(), weights.scalar_type());
    const auto rows = (p.sum(-1) > 0).to(weights.scalar_type());   // (B, Tq): rows with a target
    const auto onTarget = (weights * p.unsqueeze(1)).sum(-1);      // (R, B, h, Tq)
    const auto total = (onTarget * rows.unsqueeze(1)).sum({1, 3}); // (R, h)
    // Over the rows with a target, counted on the device (no wait for the host): with none, the
    // total is 0 too and 0 / 0 is NaN.
    return total / rows.sum();
}

torch::Tensor positionalScore(const torch::Tensor &weights)
{
    // Over the batch first: the mean at an offset is the mean of the batch's means.
    const auto mean = weights.mean(1); // (R, h, Tq, T)
    const int64_t Tq = mean.size(2), T = mean.size(3);
    torch::Tensor best;
    for (int64_t d = 0; d < Tq && d < T; ++d) {
        // Keys k = q − d: the diagonal d below the main one (Tq == T; with Tq < T the queries are
        // the last Tq positions, whose keys sit T − Tq further right).
        const auto diagonal = mean.diagonal(T - Tq - d, 2, 3); // (R, h, n)
        if (diagonal.size(-1) == 0) continue;
        const auto at = diagonal.mean(-1);
        best = best.defined() ? torch::maximum(best, at) : at;
    }
    return best.defined() ? best : torch::zeros({mean.size(0), mean.size(1)}, mean.options());
}

} // namespace headlab
