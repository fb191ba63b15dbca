// test_golden.cpp — HeadLab's Transformer, its loss functions and its Adam against the goldens
// tests/golden/gradient_golden.py writes from a transformer of its own in plain PyTorch (llm.c's
// test_gpt2 in manner): for the plain model of each task (addition's answer, text's next token,
// nearest neighbour's regression) the script draws the weights and one batch; here the weights go
// into HeadLab's model by name (a parameter the golden lacks, or one it has that the model lacks,
// fails), and the step-0 outputs, the loss, every parameter's gradient and the losses of 10 Adam
// steps on that batch must agree, each tensor within a tolerance of its own scale. On the CPU in
// CI; on each CUDA device too where there is one (scripts/gpu-tests.sh), TF32 off.
#include "core/config/Safetensors.h"
#include "core/config/Yaml.h"
#include "core/model/Adam.h"
#include "core/model/Transformer.h"
#include "core/schema/RunConfigFields.h"
#include "core/tasks/Task.h"
#include "core/tasks/nearest_neighbour/NearestNeighbourTask.h"

#include <torch/torch.h>

#include <QtTest>

#include <yaml-cpp/yaml.h>

#include <cstring>

using namespace headlab;

namespace {

torch::Tensor tensorOf(const safetensors::Tensor &t)
{
    const auto dtype = t.dtype == safetensors::DType::F64   ? torch::kFloat64
                       : t.dtype == safetensors::DType::I64 ? torch::kInt64
                                                            : torch::kFloat32;
    auto out = torch::empty(t.shape, torch::TensorOptions().dtype(dtype));
    std::memcpy(out.data_ptr(), t.data.data(), t.data.size());
    return out;
}

struct Golden {
    std::string task, objective;
    ModelConfig model;
    int64_t vocab = 0, positions = 0;
    OptimizerConfig adam;
    double lr = 0;
    std::map<std::string, torch::Tensor> tensors;
};

Golden load(const std::string &path)
{
    const safetensors::Contents c = safetensors::read(path, "golden");
    Golden g;
    for (const auto &t : c.tensors) g.tensors[t.name] = tensorOf(t);
    g.task = c.metadata.at("task");
    g.objective = c.metadata.at("objective");
    g.vocab = std::stoll(c.metadata.at("vocab"));
    g.positions = std::stoll(c.metadata.at("positions"));
    // The model block as a session file writes it (JSON is YAML), read by the field table.
    readFields(yaml::YamlField{path, "model", YAML::Load(c.metadata.at("model")), {}, nullptr},
               modelFields(), g.model);
    const YAML::Node adam = YAML::Load(c.metadata.at("adam"));
    g.lr = adam["lr"].as<double>();
    g.adam.beta1 = adam["beta1"].as<double>();
    g.adam.beta2 = adam["beta2"].as<double>();
    g.adam.eps = adam["eps"].as<double>();
    return g;
}

// The model's gradient of parameter p (run 0), a view into the flat gradients.
torch::Tensor gradientOf(const Transformer &model, const Parameter &p)
{
    const int64_t offset = p.value.storage_offset() - model.flatParameters().storage_offset();
    return model.flatGradients().narrow(0, offset, p.value.numel()).view(p.value.sizes())[0];
}

// Fails naming `what` where max |got − want| is over `relative` times want's largest entry, plus
// `floor` (a tensor that is zero in exact arithmetic, such as the keys' bias's gradient, which the
// softmax cancels, is float noise of the size of the products around it).
bool close(const QString &what, const torch::Tensor &got, const torch::Tensor &want,
           double relative, QString *why, double floor = 0)
{
    const auto g = got.detach().to(torch::kCPU, torch::kFloat64);
    const auto w = want.to(torch::kFloat64);
    if (g.sizes() != w.sizes()) {
        *why = QStringLiteral("%1: shape differs").arg(what);
        return false;
    }
    const double scale = w.abs().max().item<double>(), diff = (g - w).abs().max().item<double>();
    const double allowed = relative * std::max(scale, 1e-12) + floor;
    if (!(diff <= allowed)) { // NaN fails too
        *why = QStringLiteral("%1: max |HeadLab − golden| %2, allowed %3 (its largest entry %4)")
                   .arg(what)
                   .arg(diff)
                   .arg(allowed)
                   .arg(scale);
        return false;
    }
    return true;
}

torch::Tensor lossOf(const Golden &g, const torch::Tensor &out, const torch::Tensor &target)
{
    if (g.objective == "regression") return NearestNeighbourTask::squaredDistanceLoss(out, target);
    if (g.objective == "answer")
        return crossEntropyPerRun(out.narrow(2, out.size(2) - 1, 1), target);
    return crossEntropyPerRun(out, target);
}

} // namespace

class TestGolden : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { at::globalContext().setAllowTF32CuBLAS(false); }

    void matchesTheIndependentModel_data()
    {
        QTest::addColumn<QString>("task");
        QTest::addColumn<QString>("device");
        std::vector<std::string> devices = {"cpu"};
        for (int64_t i = 0; i < int64_t(torch::cuda::device_count()); ++i)
            devices.push_back("cuda:" + std::to_string(i));
        for (const char *task : {"addition", "text", "nearest_neighbour"})
            for (const auto &device : devices)
                QTest::newRow((std::string(task) + " " + device).c_str())
                    << QString(task) << QString::fromStdString(device);
    }

    void matchesTheIndependentModel()
    {
        QFETCH(QString, task);
        QFETCH(QString, device);
        const Golden g =
            load(HEADLAB_SOURCE_DIR "/tests/golden/" + task.toStdString() + ".safetensors");
        const torch::Device dev(device.toStdString());
        const bool gpu = dev.is_cuda();
        // float32 in other orders of summation; the GPU's kernels sum in orders of their own.
        const double outputs = gpu ? 1e-5 : 2e-6, gradients = gpu ? 1e-4 : 2e-5,
                     losses = gpu ? 1e-4 : 2e-5;
        Transformer model(g.model, g.vocab, g.positions, 1, dev);
        QSet<QString> given;
        for (const auto &[name, value] : g.tensors)
            if (name.rfind("weight.", 0) == 0) given.insert(QString::fromStdString(name.substr(7)));
        {
            torch::NoGradGuard noGrad;
            for (auto &p : model.parameters()) {
                const QString name = QString::fromStdString(p.name);
                QVERIFY2(given.remove(name), qPrintable("the golden has no weight " + name));
                const auto &w = g.tensors.at("weight." + p.name);
                QVERIFY2(p.value[0].sizes() == w.sizes(), qPrintable(name + ": shape differs"));
                p.value[0].copy_(w);
            }
        }
        QVERIFY2(given.isEmpty(), qPrintable("the model has no parameter " +
                                             QStringList(given.values()).join(", ")));

        auto input = g.tensors.at("input").to(dev), target = g.tensors.at("target").to(dev);
        if (g.objective == "regression") { // points (R, B, N, d), their farthest points
            input = input.unsqueeze(0);
            target = target.unsqueeze(0);
            QVERIFY(torch::equal(NearestNeighbourTask::farthestPointTargets(input).cpu(),
                                 target.cpu()));
        }
        const auto out = model.forward(input);
        QString why;
        QVERIFY2(close("outputs", out[0], g.tensors.at("logits"), outputs, &why), qPrintable(why));
        const auto loss = lossOf(g, out, target);
        QVERIFY2(close("loss", loss[0], g.tensors.at("losses")[0], losses, &why), qPrintable(why));
        loss.sum().backward();
        double largest = 0; // the largest gradient entry of any parameter
        for (const auto &[name, value] : g.tensors)
            if (name.rfind("grad.", 0) == 0)
                largest = std::max(largest, value.abs().max().item<double>());
        for (const auto &p : model.parameters())
            QVERIFY2(close(QString::fromStdString(p.name + "'s gradient"), gradientOf(model, p),
                           g.tensors.at("grad." + p.name), gradients, &why, 1e-6 * largest),
                     qPrintable(why));

        // 10 Adam steps on the same batch, from the same weights (llm.c's check of the update).
        Transformer trained(g.model, g.vocab, g.positions, 1, dev);
        {
            torch::NoGradGuard noGrad;
            for (auto &p : trained.parameters()) p.value[0].copy_(g.tensors.at("weight." + p.name));
        }
        Adam adam(trained, g.adam);
        std::vector<torch::Tensor> rates(trained.parameters().size(),
                                         torch::full({1}, g.lr, torch::kFloat64));
        adam.setLearningRates(rates);
        const auto one = torch::ones({}, torch::TensorOptions().dtype(torch::kFloat64).device(dev));
        const auto want = g.tensors.at("losses");
        for (int64_t step = 0; step < want.size(0); ++step) {
            const auto l = lossOf(g, trained.forward(input), target);
            QVERIFY2(
                close(QStringLiteral("loss at step %1").arg(step), l[0], want[step], losses, &why),
                qPrintable(why));
            l.sum().backward();
            adam.step(one);
            adam.zeroGrad();
        }
    }
};

QTEST_GUILESS_MAIN(TestGolden)
#include "test_golden.moc"
