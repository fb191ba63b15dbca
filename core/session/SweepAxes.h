// SweepAxes.h — the sweep's axes, one row each: how a value is read (with a located message),
// written back, applied to a run's config, and titled on a figure. The named axes (d_model, heads,
// head_schedule, head_dim, lr, seed, layers, width_multiplier, qk_rule, logit_scale) are rows of
// namedAxes(), in the order their values are applied; every config-field row the field table
// offers as an axis (the stabilizers, model.KEY; core/tasks/RunConfigFields.h) is a row too, made
// from the field's own reader. Session.cpp's reading, writing and expansion loop over the rows.
// Torch-free.
#pragma once

#include "core/config/Yaml.h"
#include "core/session/SessionData.h"

#include <yaml-cpp/yaml.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace headlab {

struct SweepAxisRow {
    std::string name;
    std::string title; // on figures and tables: "heads (n_H)"
    // One value, from a YAML scalar (or, for heads, a per-layer list); located errors.
    std::function<AxisValue(const yaml::YamlField &)> read;
    // The whole axis given in a form of its own instead of a list (lr: {logspace: …}, head_schedule
    // {scheme: [...], total: [...]}), or nullopt for the list (or one value).
    std::function<std::optional<std::vector<AxisValue>>(const yaml::YamlField &)> readForm;
    std::function<void(YAML::Emitter &, const AxisValue &)> write;
    // Applies a value to a run's config; "" or why the combination cannot be built. `all` is the
    // run's whole assignment (heads checks the layer count against it).
    std::function<std::string(RunConfig &, const AxisValue &,
                              const std::map<std::string, const AxisValue *> &all)>
        apply;
    // The run's value when the axis is not swept for it, for tables ("" where none is shown).
    std::function<std::string(const RunConfig &)> resolved;
    // What a legend writes before a value ("η = 0.001", as the papers write it); "": the name.
    std::string symbol;
};

// The named axes, in the order their values are applied: the layer count before the head counts
// that fill it, the head schedule after d_model and the layers it depends on.
const std::vector<SweepAxisRow> &namedAxes();
std::vector<std::string> namedAxisNames();
// A named axis, or a field-table axis as a row (applied after the named ones); nullopt if neither.
std::optional<SweepAxisRow> findSweepAxis(const std::string &name);
// findSweepAxis with each name looked up once (a field-table axis's row is built on each call),
// for code that asks per value or per run.
class SweepAxisLookup {
public:
    const std::optional<SweepAxisRow> &operator()(const std::string &name);

private:
    std::map<std::string, std::optional<SweepAxisRow>> m_rows;
};
// An axis's values from its YAML: a list, one value, or its own form.
std::vector<AxisValue> readAxisValues(const SweepAxisRow &axis, const yaml::YamlField &field);
// The values of an axis's own form (`form`: YAML::Load of its text, e.g. logspaceForm's), read by
// the row's own reader: a SessionError located at sweep.NAME when a value is out of range;
// nullopt when the row has no form or the node is not one (a list).
std::optional<std::vector<AxisValue>>
expandAxisForm(const SweepAxisRow &row, const std::string &name, const YAML::Node &form);
// The axis's own form as it is written back: its YAML when `axis.form` still expands to exactly
// `axis.values` (a form the user did not edit since), else nullopt (write the list).
std::optional<YAML::Node> axisFormHolds(const SweepAxisRow &row, const SweepAxis &axis);
// `field`'s node as one line of flow YAML, for SweepAxis::form.
std::string flowYaml(const YAML::Node &node);
// A log-spaced η form, as the form's generator row writes it.
std::string logspaceForm(double from, double to, int64_t count);
// A number axis value (a search's probe of η, for one).
AxisValue numberAxisValue(double number);
// The title of an axis on a figure ("heads (n_H)"); the name for others.
std::string sweepAxisTitle(const std::string &name);
// What a legend writes before the axis's value ("η" for lr); the name where the row has none.
std::string sweepAxisSymbol(const std::string &name);

} // namespace headlab
