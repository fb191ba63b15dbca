// HeadRoles.h — what a head does, scored from its attention (issue 76): the share of its
// attention on the targets of a role, as TransformerLens's head detector measures it ("mul":
// the attention on the pattern over the attention, here over the query rows that have a target,
// so that a head built for the role scores 1):
//   previous_token   the token just before the query;
//   duplicate_token  an earlier position holding the query's token;
//   induction        the position after an earlier copy of the query's token (what an induction
//                    head attends to, to predict that the sequence repeats);
// and positional, the most attention a head puts at one fixed offset before the query (0 is the
// query itself, 1 the previous token): a head that attends by position scores 1 at its offset.
// Internal to core/ (LibTorch): the attention probe computes them (Transformer::attendProbed)
// and headStatTable's Role rows read them.
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>

namespace headlab {

// The role patterns of a batch of token ids (B, T), each (B, T, T) of 0 and 1 (query, key);
// none for an input that is not token ids.
std::map<std::string, torch::Tensor> rolePatterns(const torch::Tensor &tokens);

// The share of attention `weights` (R, B, heads, T, T) puts on `pattern` (B, T, T), averaged over
// the query rows that have a target in the batch: (R, heads); NaN where no row has one.
torch::Tensor patternScore(const torch::Tensor &weights, const torch::Tensor &pattern);

// The largest, over offsets d ≥ 0, of the mean attention at key q − d over the queries q ≥ d and
// the batch: (R, heads).
torch::Tensor positionalScore(const torch::Tensor &weights);

} // namespace headlab
