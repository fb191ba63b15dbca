// test_lanes.cpp — the CPU's lanes attention (core/model/LaneAttention.h) against ATen's
// scaled_dot_product_attention, on tensors: outputs and gradients. test_core trains with both.
#include "core/model/LaneAttention.h"

#include <QtTest>

#include <cmath>

using namespace headlab;

class TestLanes : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void laneAttentionMatchesSdpa()
    {
        // The CPU's lanes against ATen's scaled_dot_product_attention: outputs and the gradients of
        // q, k and v, causal and at the last position only, with heads 2 and 4 wide, and 2 · 5 · 3
        // (sequence, head) pairs, not a multiple of the 16 lanes (the padding).
        torch::manual_seed(7);
        for (const int64_t hd : {2, 4})
            for (const bool lastOnly : {false, true}) {
                const int64_t R = 2, B = 5, H = 3, T = 19, Tq = lastOnly ? 1 : T;
                auto make = [&](int64_t len) {
                    return (torch::randn({R, B, len, H * hd}) * 2).requires_grad_(true);
                };
                const auto q = make(Tq), k = make(T), v = make(T);
                const auto grad = torch::randn({R, B, Tq, H * hd});
                const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
                const auto lanes = laneAttention(q, k, v, H, hd, scale, !lastOnly);
                const auto lanesGrads = torch::autograd::grad({lanes}, {q, k, v}, {grad});
                auto split = [&](const torch::Tensor &t) {
                    return t.reshape({R * B, t.size(2), H, hd}).transpose(1, 2);
                };
                const auto reference = at::scaled_dot_product_attention(
                                           split(q), split(k), split(v), {}, 0.0, !lastOnly, scale)
                                           .transpose(1, 2)
                                           .reshape({R, B, Tq, H * hd});
                const auto referenceGrads = torch::autograd::grad({reference}, {q, k, v}, {grad});
                const auto label = QStringLiteral("hd %1%2").arg(hd).arg(lastOnly ? ", last" : "");
                QVERIFY2((lanes - reference).abs().max().item<double>() < 1e-5, qPrintable(label));
                for (size_t g = 0; g < 3; ++g)
                    QVERIFY2((lanesGrads[g] - referenceGrads[g]).abs().max().item<double>() < 1e-4,
                             qPrintable(label + QStringLiteral(" gradient %1").arg(g)));
            }
    }
};

QTEST_GUILESS_MAIN(TestLanes)
#include "test_lanes.moc"
