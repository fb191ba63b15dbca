// test_cpu_kernels.cpp — HeadLab's own CPU loops against ATen's path, on tensors: outputs and
// gradients. The lanes attention (core/model/LaneAttention.h) against
// scaled_dot_product_attention; the token embedding with the positions (Kernels.h:
// fusedEmbeddingForward) against index_select, gather and an add; the LayerNorm with each run's
// scale and shift (fusedLayerNormForward) against layer_norm and addcmul. test_core trains with
// each on and off.
#include "core/model/CpuParallel.h"
#include "core/model/Kernels.h"
#include "core/model/LaneAttention.h"
#include "tests/LayerNormReference.h"

#include <QtTest>

#include <array>
#include <cmath>

using namespace headlab;

class TestCpuKernels : public QObject {
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

    void embeddingMatchesAten()
    {
        // The CPU's embedding loop against Transformer's ATen path (index_select or gather, then the
        // positions added) and autograd through it: tokens shared by the runs and per run, with
        // positions longer than the sequence and without positions; the gradients of the table
        // and the positions, zero where no token or position took part.
        torch::manual_seed(11);
        const int64_t R = 3, B = 5, T = 7, V = 14, P = 9, d = 24;
        for (const bool perRun : {false, true})
            for (const bool withPositions : {true, false}) {
                const auto tokens =
                    perRun ? torch::randint(0, V - 2, {R, B, T}) : torch::randint(0, V - 2, {B, T});
                const auto table = torch::randn({R, V, d}).requires_grad_(true);
                const auto positions = torch::randn({R, P, d}).requires_grad_(true);
                const auto pos = withPositions ? positions : torch::Tensor();
                const auto plainPos = withPositions ? positions.detach() : torch::Tensor();
                const auto label = QStringLiteral("%1, %2")
                                       .arg(perRun ? "per run" : "shared")
                                       .arg(withPositions ? "positions" : "none");
                QVERIFY2(fusedEmbeddingFits(tokens, table, pos), qPrintable(label));
                const auto dy = torch::randn({R, B, T, d});
                const auto y = fusedEmbeddingForward(tokens, table.detach(), plainPos);
                const auto [dTable, dPositions] =
                    fusedEmbeddingBackward(tokens, dy, table.detach(), plainPos);
                torch::Tensor reference =
                    perRun ? table.gather(1, tokens.reshape({R, B * T, 1}).expand({R, B * T, d}))
                                 .view({R, B, T, d})
                           : table.index_select(1, tokens.reshape({-1})).view({R, B, T, d});
                if (withPositions) reference = reference + positions.slice(1, 0, T).unsqueeze(1);
                reference.backward(dy);
                QVERIFY2((y - reference).abs().max().item<double>() == 0.0, qPrintable(label));
                QVERIFY2((dTable - table.grad()).abs().max().item<double>() < 1e-5,
                         qPrintable(label));
                QVERIFY2(dTable.narrow(1, V - 2, 2).abs().max().item<double>() == 0.0,
                         qPrintable(label)); // the tokens no sample drew
                if (withPositions) {
                    QVERIFY2((dPositions - positions.grad()).abs().max().item<double>() < 1e-5,
                             qPrintable(label));
                    QVERIFY(dPositions.narrow(1, T, P - T).abs().max().item<double>() == 0.0);
                } else {
                    QVERIFY(!dPositions.defined());
                }
            }
        // A token outside the vocabulary is an error, not a read out of bounds; tensors the loop
        // does not take are refused.
        const auto table = torch::randn({1, 4, 8});
        QVERIFY_THROWS_EXCEPTION(c10::Error, fusedEmbeddingForward(torch::full({1, 2}, int64_t{4}),
                                                                   table, torch::Tensor()));
        QVERIFY(!fusedEmbeddingFits(torch::zeros({1, 2}, torch::kInt32), table, torch::Tensor()));
        QVERIFY(!fusedEmbeddingFits(torch::zeros({1, 2}, torch::kInt64), table.transpose(1, 2),
                                    torch::Tensor()));
        QVERIFY(!fusedEmbeddingFits(torch::zeros({1, 5}, torch::kInt64), table,
                                    torch::zeros({1, 4, 8})));
    }

    void cpuLoopsTakeTheThreadsTheBuildGives()
    {
        // Built against an OpenMP LibTorch with its libgomp found (core/model/CMakeLists.txt), the
        // loops take the intra-op threads; HEADLAB_CPU_LOOP_THREADS=0 keeps them on one.
#ifdef HEADLAB_EXPECT_CPU_LOOP_THREADS
        QVERIFY(cpuLoopsThreaded());
#else
        QVERIFY(!cpuLoopsThreaded());
#endif
        qputenv("HEADLAB_CPU_LOOP_THREADS", "0");
        QVERIFY(!cpuLoopsThreaded());
        qunsetenv("HEADLAB_CPU_LOOP_THREADS");
    }

    void layerNormMatchesAten()
    {
        // The CPU's LayerNorm loop against Transformer::norm's ATen path (layer_norm, then addcmul)
        // and autograd through it: y and the gradients of x, g and b, at the classroom's width
        // (24), the text model's (64), Figure 2's widest (384), widths that are no multiple of the
        // loop's 16 partial sums (100, 2, 17) and one row; with the unbiased-variance convention's
        // eps and scale. Then a shape the loop does not take (another dtype, a view) is refused,
        // not computed wrong.
        for (const auto &given : std::vector<std::array<int64_t, 3>>{
                 {2, 448, 24}, {3, 512, 64}, {1, 64, 384}, {2, 5, 100}, {3, 7, 2}, {1, 1, 17}}) {
            const int64_t R = given[0], rows = given[1], d = given[2];
            torch::manual_seed(R * 1000 + d);
            const auto x = torch::randn({R, rows, d}) * 3 + 1;
            const auto gain = torch::rand({R, d}) + 0.5, shift = torch::randn({R, d});
            const auto dy = torch::randn({R, rows, d});
            const auto label = QStringLiteral("R %1, rows %2, d %3").arg(R).arg(rows).arg(d);
            const double n = static_cast<double>(d), eps = 1e-9 * (n - 1.0) / n;
            const double c = std::sqrt((n - 1.0) / n);
            const auto parts = fusedLayerNormForward(x, gain, shift, eps, c);
            QVERIFY2(parts, qPrintable("the forward loop refused " + label));
            const auto back = fusedLayerNormBackward(dy, x, *parts, gain, c);
            QVERIFY2(back, qPrintable("the backward loop refused " + label));
            const auto ref = testing::layerNormReference(x, gain, shift, dy, eps, c);
            const auto close = [&](const char *what, const torch::Tensor &ours,
                                   const torch::Tensor &aten, double scale) {
                const double gap = (ours - aten).abs().max().item<double>();
                QVERIFY2(gap <= 1e-5 * scale,
                         qPrintable(QStringLiteral("%1 at %2: %3 apart (scale %4)")
                                        .arg(what, label)
                                        .arg(gap)
                                        .arg(scale)));
            };
            close("y", parts->y, ref.y, ref.y.abs().max().item<double>());
            // At d 2 x's gradient is rounding alone (each row normalizes to ±1): the scale is
            // what its terms are, rstd · |dy · c · g|, before they cancel.
            close("x's gradient", back->dx, ref.dx,
                  (parts->rstd.unsqueeze(2) * dy * gain.unsqueeze(1)).abs().max().item<double>());
            close("g's gradient", back->gain, ref.gain,
                  (dy * parts->y).abs().sum(1).max().item<double>());
            close("b's gradient", back->shift, ref.shift, dy.abs().sum(1).max().item<double>());
        }
        // The same bits on one thread and on two (the backward pass sums fixed slices of rows).
        {
            torch::manual_seed(3);
            const auto x = torch::randn({2, 1000, 24}), gain = torch::rand({2, 24}) + 0.5,
                       shift = torch::randn({2, 24}), dy = torch::randn({2, 1000, 24});
            const int threads = at::get_num_threads();
            std::vector<torch::Tensor> outs;
            for (const int n : {1, 2}) {
                at::set_num_threads(n);
                const auto parts = fusedLayerNormForward(x, gain, shift, 1e-9, 0.97);
                const auto back = fusedLayerNormBackward(dy, x, *parts, gain, 0.97);
                outs.insert(outs.end(), {parts->y, back->dx, back->gain, back->shift});
            }
            at::set_num_threads(threads);
            for (size_t k = 0; k < 4; ++k) QVERIFY(torch::equal(outs[k], outs[k + 4]));
        }
        const auto x = torch::randn({2, 4, 8}), gain = torch::ones({2, 8}),
                   shift = torch::zeros({2, 8});
        QVERIFY(!fusedLayerNormForward(x.to(torch::kFloat64), gain.to(torch::kFloat64),
                                       shift.to(torch::kFloat64), 1e-9, 1.0));
        QVERIFY(!fusedLayerNormForward(x.transpose(1, 2), gain.narrow(1, 0, 4),
                                       shift.narrow(1, 0, 4), 1e-9, 1.0));
    }
};

QTEST_GUILESS_MAIN(TestCpuKernels)
#include "test_cpu_kernels.moc"
