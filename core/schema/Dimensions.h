// Dimensions.h — the dimension table: every dimension of a configuration that a session sweeps,
// a search runs along, a law is fitted against or a table shows, one row each. A row says how a
// value is read (with a located message), written back, applied to a run's config, titled on a
// figure, and (its `use`) what a dimension is to the search, the law and the tables: its role,
// its numeric value of a run, whether it is whole-numbered, the range a search along it starts
// from, and whether a law may be fitted against it. The named dimensions (d_model, heads,
// head_schedule, head_dim, lr, seed, layers, width_multiplier, qk_rule, logit_scale, and
// total_heads, which is derived and not swept) are rows of dimensions(), in the order their values
// are applied; every config-field row the field table offers as an axis (the stabilizers,
// model.KEY; core/schema/RunConfigFields.h) is a row too, made from the field's own reader.
// Session reading, writing and expansion, the search, the law, the form and the run table loop
// over the rows. Torch-free.
#pragma once

#include "core/config/RunConfig.h"
#include "core/config/Yaml.h"
#include "core/schema/AxisValue.h"

#include <yaml-cpp/yaml.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace headlab {

// What a dimension is to a configuration: part of the model's shape (the configurations a law is
// fitted over differ in shapes), of how it is trained (η), its seed, or another choice.
enum class DimensionRole { Shape, Training, Seed, Choice };

// The range a new boundary search along a dimension starts from (the form's default).
struct SearchRange {
    double low = 0;
    double high = 0;
};

// What the search, the law and the tables make of a dimension.
struct DimensionUse {
    DimensionRole role = DimensionRole::Choice;
    // The dimension's value of a run as a number (NaN where it has none): what a search along it
    // reads back and a law fitted against it takes the logarithm of. Empty: no numeric value.
    std::function<double(const RunConfig &)> number;
    bool integer = false;              // whole numbers: a search snaps to them, from 1
    std::optional<SearchRange> search; // a search may run along it, by default over this range
    bool law = false;                  // a law's x (or one of its `also`) may be it
    bool headline = false; // a column of the run table even when a session does not sweep it
};

struct Dimension {
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
    DimensionUse use;
    // The field-table row it is, by its path in a config ("model.d_model"; fieldDimension), or ""
    // for a composite dimension with code of its own (layers, heads, head_schedule, seed, ...).
    std::string field;
    // The paper's letter for it, where a compact label writes one ("m", "n_H", "m_H"); "": the name.
    std::string letter;
    // A derived dimension (total_heads) has no reader: it is never swept, only read off a run.
    bool swept() const { return bool(read); }
};

// The named dimensions, in the order their values are applied: the layer count before the head
// counts that fill it, the head schedule after d_model and the layers it depends on; the derived
// ones last.
const std::vector<Dimension> &dimensions();

// A dimension that is one row of the field table (core/schema/RunConfigFields.h) plus columns:
// `field` is the row's path in a config ("lr", "model.d_model"), and the row reads, checks, applies
// and writes the values and gives a run's value; `title`, `symbol` and `use` are the columns the
// row does not have. A value the row writes as a number is kept as one (labels, plots, the
// search); `use.number`, when not given, is that number of the run's value. d_model, the width
// multiplier, η and the logit scale are such rows; adding one is one line of the table.
Dimension fieldDimension(std::string name, const std::string &field, std::string title,
                         DimensionUse use = {}, std::string symbol = {}, std::string letter = {});

// A row added to the table for as long as this object lives, after the named ones: every reader
// of the table sees it (the recipe tests add a dummy dimension this way). Not for use while
// another thread reads the table.
class ScopedDimension {
public:
    explicit ScopedDimension(Dimension row);
    ~ScopedDimension();
    ScopedDimension(const ScopedDimension &) = delete;
    ScopedDimension &operator=(const ScopedDimension &) = delete;

private:
    std::string m_name;
};
std::vector<std::string> sweptDimensionNames();
// The dimensions a search can run along (η first, then the shapes in the table's order), and
// those a law can be fitted against: the rows whose `use` says so.
std::vector<std::string> searchableDimensions();
std::vector<std::string> lawDimensions();
// A named dimension's value of a run as a number; NaN where it has none (or no such dimension).
double dimensionNumber(const RunConfig &config, const std::string &name);
bool isIntegerDimension(const std::string &name);
bool isShapeDimension(const std::string &name); // role Shape: a configuration's shape
// The dimensions a table shows for a session that sweeps none (d_model, heads, lr).
std::vector<std::string> headlineDimensions();
// The range a new search along `name` starts from; nullopt where no search runs along it.
std::optional<SearchRange> defaultSearchRange(const std::string &name);
// "a, b or c": names listed for a message.
std::string joinedNames(const std::vector<std::string> &names, const std::string &last = "or");
// The sweep axis that sets the model row `key` of the field table: the name of its dimension
// where one is that row (d_model, head_dim, logit_scale), else model.KEY (model.ffn_width).
std::string modelAxisName(const std::string &key);
// A named dimension that is swept, or a field-table axis as a row (applied after the named ones);
// nullopt if neither (a derived dimension such as total_heads is not swept: nullopt too).
std::optional<Dimension> findDimension(const std::string &name);
// findDimension with each name looked up once (a field-table axis's row is built on each call),
// for code that asks per value or per run.
class DimensionLookup {
public:
    const std::optional<Dimension> &operator()(const std::string &name);

private:
    std::map<std::string, std::optional<Dimension>> m_rows;
};
// An axis's values from its YAML: a list, one value, or its own form.
std::vector<AxisValue> readAxisValues(const Dimension &axis, const yaml::YamlField &field);
// The values of an axis's own form (`form`: YAML::Load of its text, e.g. logspaceForm's), read by
// the row's own reader: a SessionError located at sweep.NAME when a value is out of range;
// nullopt when the row has no form or the node is not one (a list).
std::optional<std::vector<AxisValue>> expandAxisForm(const Dimension &row, const std::string &name,
                                                     const YAML::Node &form);
// The axis's own form as it is written back: its YAML when `axis.form` still expands to exactly
// `axis.values` (a form the user did not edit since), else nullopt (write the list).
std::optional<YAML::Node> axisFormHolds(const Dimension &row, const SweepAxis &axis);
// `field`'s node as one line of flow YAML, for SweepAxis::form.
std::string flowYaml(const YAML::Node &node);
// A log-spaced η form, as the form's generator row writes it.
std::string logspaceForm(double from, double to, int64_t count);
// A number axis value (a search's probe of η, for one).
AxisValue numberAxisValue(double number);
// The title of an axis on a figure ("heads (n_H)"); the name for others.
std::string dimensionTitle(const std::string &name);
// What a legend writes before the axis's value ("η" for lr); the name where the row has none.
std::string dimensionSymbol(const std::string &name);
// The paper's letter for it in a compact label ("m" for d_model, "n_H" for heads); else the name.
std::string dimensionLetter(const std::string &name);

} // namespace headlab
