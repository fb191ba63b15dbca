// SamplesView.cpp — the "Samples" dock: the selected text runs' samples with their settings.
#include "ui/app/SamplesView.h"

#include "core/metrics/Metrics.h"

#include "ui/model/RunMetrics.h"
#include "ui/model/SessionModel.h"

#include <QLabel>
#include <QPlainTextEdit>
#include <QVBoxLayout>

namespace headlab::ui {

namespace {

constexpr int kMostRuns = 12; // a sweep's worth of text stays readable

QString labelsOf(const SessionRun &run, int index)
{
    QStringList parts;
    for (const auto &[axis, value] : run.labels)
        parts << QStringLiteral("%1 = %2").arg(QString::fromStdString(axis),
                                               QString::fromStdString(value));
    return QStringLiteral("Run %1%2")
        .arg(index)
        .arg(parts.isEmpty() ? QString()
                             : QStringLiteral(" · ") + parts.join(QStringLiteral(", ")));
}

} // namespace

SamplesView::SamplesView(SessionModel *model, QWidget *parent)
    : QWidget(parent)
    , m_model(model)
{
    m_header = new QLabel(this);
    m_header->setWordWrap(true);
    m_text = new QPlainTextEdit(this);
    m_text->setReadOnly(true);
    m_text->setLineWrapMode(QPlainTextEdit::WidgetWidth);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_header);
    layout->addWidget(m_text, 1);
    refresh();
}

void SamplesView::setRuns(const QList<int> &runs)
{
    m_runs = runs;
    refresh();
}

QString SamplesView::text() const
{
    return m_header->text() + QLatin1Char('\n') + m_text->toPlainText();
}

bool SamplesView::hasSamples() const
{
    return m_hasSamples;
}

void SamplesView::refresh()
{
    m_hasSamples = false;
    const Session &session = m_model->session();
    const TaskSpec *spec = sessionTask(session);
    if (!spec || !spec->producesSamples) {
        m_header->setText(tr("Samples are drawn from text runs (task: text) when they finish."));
        m_text->clear();
        return;
    }
    QList<int> runs;
    for (int r : m_runs)
        if (r >= 0 && r < m_model->runCount()) runs << r;
    if (runs.isEmpty()) {
        m_header->setText(
            tr("Select runs in the run table to read the text their trained models write."));
        m_text->clear();
        return;
    }
    const auto &task = session.base.task;
    m_header->setText(task.sampleLength > 0
                          ? tr("Prompt \"%1\", temperature %2, %3 bytes, seeds from %4")
                                .arg(QString::fromStdString(task.samplePrompt).toHtmlEscaped())
                                .arg(task.sampleTemperature)
                                .arg(task.sampleLength)
                                .arg(task.sampleSeed)
                          : tr("This session draws no samples (sample_length is 0)."));
    QString out;
    for (int i = 0; i < runs.size() && i < kMostRuns; ++i) {
        const SessionRun &run = m_model->run(runs[i]);
        const RunResult &r = run.result;
        out += labelsOf(run, runs[i]);
        out += QStringLiteral(" · %1").arg(QString::fromUtf8(toString(r.status)));
        if (const auto it = r.metrics.find(metric::kFinalTestLoss); it != r.metrics.end())
            out += tr(" · validation loss %1").arg(it->second, 0, 'f', 4);
        out += QLatin1Char('\n');
        if (r.samples.empty()) {
            out += r.status == RunStatus::Done
                       ? tr("  (no samples stored)\n")
                       : tr("  (samples are drawn when the run finishes)\n");
        }
        m_hasSamples = m_hasSamples || !r.samples.empty();
        for (size_t k = 0; k < r.samples.size(); ++k)
            out += tr("  sample %1 (seed %2):\n").arg(k + 1).arg(task.sampleSeed + k) +
                   QString::fromStdString(r.samples[k]) + QLatin1Char('\n');
        out += QLatin1Char('\n');
    }
    if (runs.size() > kMostRuns)
        out += tr("(%1 more selected runs not shown)\n").arg(runs.size() - kMostRuns);
    m_text->setPlainText(out);
}

} // namespace headlab::ui
