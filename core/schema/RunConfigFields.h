// RunConfigFields.h — the field table of RunConfig, and everything derived from it: the YAML
// mapping of a run's config (a session's `experiment:`, each run's `config:`), its canonical
// text, the runs.csv columns, the ensemble key, and validate().
//
// The table lives here rather than in core/config because its `task:` row reads the options of
// the task kind it names from the task table. Torch-free.
#pragma once

#include "core/attention/AttentionPlan.h"
#include "core/config/Field.h"
#include "core/config/RunConfig.h"
#include "core/config/Yaml.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace headlab {

// The rows of a run's config, in the order they are written.
const FieldTable<RunConfig> &runConfigFields();
const FieldTable<ModelConfig> &modelFields();
const FieldTable<PhaseConfig> &phaseFields();
const FieldTable<StabilizerConfig> &stabilizerFields();
const FieldTable<OptimizerConfig> &optimizerFields(); // a phase's `optimizer`
const FieldTable<ScheduleConfig> &scheduleFields();   // a phase's `schedule`
const FieldTable<QkRuleConfig> &qkRuleFields();       // `qk_rule`

// A stabilizer row added after the others for as long as this object lives: the YAML reader and
// writer, sweeps, the form's stabilizer box, `headlab-cli schema` and so Python see it (the recipe
// tests add a dummy stabilizer this way). Not for use while another thread reads the table.
class ScopedStabilizer {
public:
    explicit ScopedStabilizer(Field<StabilizerConfig> row);
    ~ScopedStabilizer();
    ScopedStabilizer(const ScopedStabilizer &) = delete;
    ScopedStabilizer &operator=(const ScopedStabilizer &) = delete;

private:
    std::string m_key;
};

// A sweep axis over one row of the field table: a stabilizer by its key (`qk_norm`, or
// `stabilizers.qk_norm`), or a one-key model row as `model.KEY` (`model.bias`, `model.norm`).
// Values are read by the row (its checks, its messages at the value's place) and kept as the
// text it writes ("gain", "30"), which is also the value's label.
struct FieldAxis {
    std::string key;
    std::function<std::string(const yaml::YamlField &value)> read; // → canonical text
    std::function<void(RunConfig &, const std::string &canonical)> apply;
    // The config's value as the canonical text `read` gives (a run whose sweep entry does not set
    // the axis still has a value on it: Replicates.h's configurationLabels).
    std::function<std::string(const RunConfig &)> text;
};
std::optional<FieldAxis> findFieldAxis(const std::string &name);
// One one-key row of the field table by its path in a config: "lr", "model.d_model",
// "qk_rule.enabled", "stabilizers.qk_norm"; nullopt for none. What a dimension that is a field row
// is built from (Dimensions.h, fieldDimension).
std::optional<FieldAxis> findConfigField(const std::string &path);
// The stabilizers' keys, the short axis names (for messages and the form).
std::vector<std::string> fieldAxisNames();

// runs.csv's config columns: task, d_model, layers, heads, head_dim, total_heads, lr, ...
const std::vector<CsvColumn<RunConfig>> &runCsvColumns();

// Configs with equal keys have the same weight shapes and training schedule and may train as one
// ensemble: every Shared row of the table, plus the head counts where they change the attention
// calls. A row not marked PerRun is in the key (Field.h: the key fails safe).
std::string ensembleKey(const RunConfig &config);

// The attention plan (core/attention/AttentionPlan.h) of an ensemble of runs like `run` (its
// model, its task's sequence length, its soft cap) whose heads per layer are `runHeads`, on
// `device`: what the trainer builds its model with and the scheduler prices.
AttentionPlan runsAttentionPlan(const RunConfig &run,
                                const std::vector<std::vector<int64_t>> &runHeads,
                                const AttentionDevice &device);

// Checks one resolved run: the task-independent checks, the phases' objectives against the task,
// and the task's own. Returns "" when it can run, else why not, naming the field
// (e.g. "model.heads[1]: 5 heads do not divide d_model 96").
std::string validate(const RunConfig &config);

namespace yaml {

// A per-layer head list, `heads: [4, 2, 1]`: one count in 1 … kMaxHeads per layer, at least one
// layer and at most kMaxLayers. The config's `model.heads` and the `heads` dimension of a sweep
// both read it here.
std::vector<int64_t> readHeadList(const YamlField &heads);

// An attention-logit scale by name (inv_sqrt_head_dim, inv_head_dim, none).
LogitScale readLogitScale(const YamlField &field);

RunConfig readRunConfig(const YamlField &field);
void writeRunConfig(YAML::Emitter &out, const RunConfig &config);
// The config as YAML text, the same for equal configs: it names a run's result file.
std::string canonicalYaml(const RunConfig &config);

} // namespace yaml

} // namespace headlab
