// Dimensions.cpp — see Dimensions.h.
#include "core/schema/Dimensions.h"

#include "core/config/HeadSchedule.h"
#include "core/schema/RunConfigFields.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>

namespace headlab {

using namespace headlab::yaml;

namespace {

AxisValue numberValue(double number)
{
    return AxisValue::ofNumber(number);
}

AxisValue textValue(std::string text)
{
    return AxisValue::ofText(std::move(text));
}

// A head_schedule value from its scheme and total fields.
AxisValue scheduleValue(const YamlField &schemeField, const YamlField &totalField)
{
    HeadScheme scheme = HeadScheme::Constant;
    if (!schemeField.present()) fail(schemeField, "missing: ascending, constant or descending");
    if (!parseHeadScheme(readString(schemeField), &scheme))
        fail(schemeField, "unknown scheme '" + readString(schemeField) +
                              "' (expected ascending, constant or descending)");
    if (!totalField.present())
        fail(totalField, "missing: the total number of heads over all layers");
    const double total = readNumber(totalField);
    if (!(total >= 1) || std::isinf(total))
        fail(totalField,
             "the total number of heads must be at least 1, got " + formatNumber(total));
    return textValue(headScheduleLabel(scheme, total));
}

// "ascending:180" or {scheme: ascending, total: 180}
AxisValue readScheduleValue(const YamlField &field)
{
    if (isScalar(field)) {
        const std::string text = field.node.Scalar();
        const auto colon = text.find(':');
        HeadScheme scheme = HeadScheme::Constant;
        double total = 0;
        if (colon == std::string::npos || !parseHeadScheme(text.substr(0, colon), &scheme) ||
            !parseNumber(text.substr(colon + 1), &total) || !(total >= 1) || std::isinf(total))
            fail(field,
                 "expected {scheme: ascending|constant|descending, total: N} or 'scheme:N', got '" +
                     text + "'");
        return textValue(headScheduleLabel(scheme, total));
    }
    checkKeys(field, {"scheme", "total"});
    return scheduleValue(child(field, "scheme"), child(field, "total"));
}

std::string joinedInts(const std::vector<int64_t> &values)
{
    std::string out;
    for (int64_t v : values) out += (out.empty() ? "" : ",") + std::to_string(v);
    return out;
}

AxisValue integerIn(const YamlField &field, int64_t low, int64_t high)
{
    return numberValue(static_cast<double>(readIntInRange(field, low, high)));
}

void writeInteger(YAML::Emitter &out, const AxisValue &value)
{
    out << static_cast<int64_t>(value.number);
}

int64_t integerOf(const AxisValue &value)
{
    return static_cast<int64_t>(value.number);
}

using All = std::map<std::string, const AxisValue *>;

// lr: {logspace: {from, to, count}}, count values evenly spaced in log η, both ends included.
std::optional<std::vector<AxisValue>> readLogspace(const YamlField &field)
{
    if (!field.node.IsMap()) return std::nullopt;
    checkKeys(field, {"logspace"});
    const YamlField logspace = child(field, "logspace");
    checkKeys(logspace, {"from", "to", "count"});
    const double from = readPositive(child(logspace, "from"));
    const double to = readPositive(child(logspace, "to"));
    const int64_t count = readIntInRange(child(logspace, "count"), 1, RunLimits::kMaxAxisValues);
    std::vector<AxisValue> values;
    for (int64_t i = 0; i < count; ++i) {
        double lr = from;
        if (i == count - 1)
            lr = to;
        else if (i > 0)
            lr =
                std::exp(std::log(from) + (std::log(to) - std::log(from)) * static_cast<double>(i) /
                                              static_cast<double>(count - 1));
        values.push_back(numberValue(lr));
    }
    return values;
}

} // namespace

Dimension fieldDimension(std::string name, const std::string &field, std::string title,
                         DimensionUse use, std::string symbol, std::string letter)
{
    const std::optional<FieldAxis> row = findConfigField(field);
    if (!row) throw std::logic_error("fieldDimension: the field table has no row '" + field + "'");
    // The row's canonical text as a value: a number where it is one.
    auto valueOf = [](const std::string &text) {
        double number = 0;
        return parseNumber(text, &number) ? numberValue(number) : textValue(text);
    };
    Dimension d;
    d.name = std::move(name);
    d.title = std::move(title);
    d.symbol = std::move(symbol);
    d.letter = std::move(letter);
    d.read = [read = row->read, valueOf](const YamlField &f) { return valueOf(read(f)); };
    d.write = [](YAML::Emitter &out, const AxisValue &value) {
        if (value.kind == AxisValue::Kind::Text)
            writeText(out, value.text);
        else
            out << formatNumber(value.number);
    };
    d.apply = [apply = row->apply](RunConfig &config, const AxisValue &value, const All &) {
        apply(config,
              value.kind == AxisValue::Kind::Text ? value.text : formatNumber(value.number));
        return std::string();
    };
    d.resolved = row->text;
    d.field = field;
    if (!use.number)
        use.number = [text = row->text](const RunConfig &config) {
            double number = NAN;
            return parseNumber(text(config), &number) ? number : NAN;
        };
    d.use = std::move(use);
    return d;
}

namespace {

std::vector<Dimension> &dimensionTable()
{
    static std::vector<Dimension> table = {
        {"layers",
         "layers",
         [](const YamlField &f) { return integerIn(f, 1, RunLimits::kMaxLayers); },
         {},
         writeInteger,
         [](RunConfig &config, const AxisValue &value, const All &all) -> std::string {
             ModelConfig &model = config.model;
             const bool constant = std::all_of(model.heads.begin(), model.heads.end(),
                                               [&](int64_t h) { return h == model.heads.front(); });
             if (!constant && !all.count("heads") && !all.count("head_schedule"))
                 return "layers: the base model has per-layer head counts; give "
                        "experiment.model.heads as one number to sweep the layer count";
             model.heads.assign(static_cast<size_t>(integerOf(value)),
                                model.heads.empty() ? 1 : model.heads.front());
             return {};
         },
         [](const RunConfig &c) { return std::to_string(c.model.layers()); },
         "",
         {.role = DimensionRole::Shape,
          .number = [](const RunConfig &c) { return double(c.model.layers()); },
          .integer = true,
          .search = SearchRange{1, 12},
          .law = true}},
        fieldDimension("d_model", "model.d_model", "d_model (m)",
                       {.role = DimensionRole::Shape,
                        .integer = true,
                        .search = SearchRange{16, 512},
                        .law = true,
                        .headline = true},
                       "", "m"),
        // Code of its own: a run's value is the derived width d_model / heads where the field says
        // auto, not the field's text.
        {"head_dim",
         "head dimension m_H",
         [](const YamlField &f) {
             if (isScalar(f) && lower(f.node.Scalar()) == "auto") return numberValue(0);
             return integerIn(f, 0, RunLimits::kMaxDModel);
         },
         {},
         writeInteger,
         [](RunConfig &config, const AxisValue &value, const All &) -> std::string {
             config.model.headDim = integerOf(value);
             return {};
         },
         [](const RunConfig &c) { return std::to_string(c.model.headDimOfLayer(0)); },
         "",
         {.role = DimensionRole::Shape,
          .number =
              [](const RunConfig &c) {
                  return c.model.heads.empty() ? NAN : double(c.model.headDimOfLayer(0));
              },
          .integer = true,
          .search = SearchRange{1, 128},
          .law = true},
         "",
         "m_H"},
        fieldDimension("width_multiplier", "model.width_multiplier", "width multiplier w",
                       {.role = DimensionRole::Shape,
                        .integer = true,
                        .search = SearchRange{1, 16},
                        .law = true}),
        fieldDimension("logit_scale", "model.logit_scale", "logit scale"),
        // Code of its own, not the field row: its labels are on/off where the row writes
        // true/false, and stored runs' labels and run-file names use on/off.
        {"qk_rule",
         "QK rule",
         [](const YamlField &f) { return textValue(readBool(f) ? "on" : "off"); },
         {},
         [](YAML::Emitter &out, const AxisValue &value) { out << (value.text == "on"); },
         [](RunConfig &config, const AxisValue &value, const All &) -> std::string {
             config.qkRule.enabled = value.text == "on";
             return {};
         },
         [](const RunConfig &c) { return std::string(c.qkRule.enabled ? "on" : "off"); }},
        {"heads",
         "heads (n_H)",
         [](const YamlField &field) {
             if (field.node.IsDefined() && field.node.IsSequence()) {
                 AxisValue value;
                 value.kind = AxisValue::Kind::IntList;
                 value.ints = readHeadList(field);
                 return value;
             }
             return integerIn(field, 1, RunLimits::kMaxHeads);
         },
         {},
         [](YAML::Emitter &out, const AxisValue &value) {
             if (value.kind != AxisValue::Kind::IntList) return writeInteger(out, value);
             out << YAML::Flow << YAML::BeginSeq;
             for (auto h : value.ints) out << h;
             out << YAML::EndSeq;
         },
         [](RunConfig &config, const AxisValue &value, const All &all) -> std::string {
             ModelConfig &model = config.model;
             if (value.kind == AxisValue::Kind::IntList) {
                 if (all.count("layers") && static_cast<int64_t>(all.at("layers")->number) !=
                                                static_cast<int64_t>(value.ints.size()))
                     return "heads " + value.label() + " lists " +
                            std::to_string(value.ints.size()) + " layers, but layers is " +
                            all.at("layers")->label();
                 model.heads = value.ints;
             } else {
                 model.heads.assign(model.heads.size(), integerOf(value));
             }
             return {};
         },
         [](const RunConfig &c) { return joinedInts(c.model.heads); },
         "",
         {.role = DimensionRole::Shape,
          .number =
              [](const RunConfig &c) {
                  return c.model.heads.empty() ? NAN : double(c.model.heads.front());
              },
          .integer = true,
          .search = SearchRange{1, 32},
          .law = true,
          .headline = true},
         "",
         "n_H"},
        {"head_schedule",
         "head schedule",
         readScheduleValue,
         [](const YamlField &field) -> std::optional<std::vector<AxisValue>> {
             // The product form: {scheme: [ascending, constant], total: [45, 90, 180]}.
             if (!field.node.IsMap() || !child(field, "scheme").node.IsDefined() ||
                 !(child(field, "scheme").node.IsSequence() ||
                   child(field, "total").node.IsSequence()))
                 return std::nullopt;
             checkKeys(field, {"scheme", "total"});
             auto listOf = [](const YamlField &f) {
                 return f.node.IsSequence() ? items(f) : std::vector<YamlField>{f};
             };
             for (const char *key : {"scheme", "total"}) // no values: an axis of no values
                 if (const auto f = child(field, key); f.node.IsSequence() && f.node.size() == 0)
                     fail(f, "an axis needs at least one value");
             std::vector<AxisValue> values;
             for (const auto &scheme : listOf(child(field, "scheme")))
                 for (const auto &total : listOf(child(field, "total")))
                     values.push_back(scheduleValue(scheme, total));
             return values;
         },
         [](YAML::Emitter &out, const AxisValue &value) {
             const auto colon = value.text.find(':');
             out << YAML::Flow << YAML::BeginMap << YAML::Key << "scheme" << YAML::Value
                 << value.text.substr(0, colon) << YAML::Key << "total" << YAML::Value
                 << value.text.substr(colon + 1) << YAML::EndMap;
         },
         [](RunConfig &config, const AxisValue &value, const All &) -> std::string {
             const auto colon = value.text.find(':');
             HeadScheme scheme = HeadScheme::Constant;
             double total = 0;
             parseHeadScheme(value.text.substr(0, colon), &scheme);
             parseNumber(value.text.substr(colon + 1), &total);
             config.model.heads =
                 headSchedule(scheme, total, config.model.layers(), config.model.dModel);
             return {};
         },
         [](const RunConfig &) { return std::string(); },
         "",
         {.role = DimensionRole::Shape}},
        [] {
            Dimension lr = fieldDimension("lr", "lr", "learning rate η",
                                          {.role = DimensionRole::Training,
                                           .number = [](const RunConfig &c) { return c.lr; },
                                           .search = SearchRange{3e-5, 3e-3},
                                           .law = true,
                                           .headline = true},
                                          "η");
            lr.readForm = readLogspace;
            return lr;
        }(),
        {"seed",
         "seed",
         [](const YamlField &f) {
             AxisValue value;
             value.kind = AxisValue::Kind::Unsigned;
             value.unsignedValue = readUnsigned(f);
             return value;
         },
         {},
         [](YAML::Emitter &out, const AxisValue &value) {
             if (value.kind == AxisValue::Kind::Unsigned)
                 out << value.unsignedValue;
             else
                 writeInteger(out, value);
         },
         [](RunConfig &config, const AxisValue &value, const All &) -> std::string {
             config.initSeed = config.dataSeed = value.kind == AxisValue::Kind::Unsigned
                                                     ? value.unsignedValue
                                                     : static_cast<uint64_t>(value.number);
             return {};
         },
         [](const RunConfig &c) { return std::to_string(c.initSeed); },
         "",
         {.role = DimensionRole::Seed}},
        // Derived, never swept: the heads of every layer together, a law's other shape axis.
        {"total_heads",
         "total heads",
         {},
         {},
         {},
         {},
         [](const RunConfig &c) { return std::to_string(c.model.totalHeads()); },
         "",
         {.role = DimensionRole::Shape,
          .number = [](const RunConfig &c) { return double(c.model.totalHeads()); },
          .integer = true,
          .law = true}},
    };
    return table;
}

} // namespace

const std::vector<Dimension> &dimensions()
{
    return dimensionTable();
}

std::vector<std::string> sweptDimensionNames()
{
    std::vector<std::string> names;
    for (const auto &row : dimensions())
        if (row.swept()) names.push_back(row.name);
    return names;
}

namespace {

const Dimension *namedDimension(const std::string &name)
{
    for (const auto &row : dimensions())
        if (row.name == name) return &row;
    return nullptr;
}

} // namespace

ScopedDimension::ScopedDimension(Dimension row)
    : m_name(row.name)
{
    if (namedDimension(m_name))
        throw std::logic_error("ScopedDimension: a dimension '" + m_name + "' exists already");
    dimensionTable().push_back(std::move(row));
}

ScopedDimension::~ScopedDimension()
{
    auto &table = dimensionTable();
    table.erase(std::remove_if(table.begin(), table.end(),
                               [&](const Dimension &row) { return row.name == m_name; }),
                table.end());
}

std::vector<std::string> searchableDimensions()
{
    std::vector<std::string> training, shape;
    for (const auto &row : dimensions())
        if (row.use.search)
            (row.use.role == DimensionRole::Training ? training : shape).push_back(row.name);
    training.insert(training.end(), shape.begin(), shape.end());
    return training;
}

std::vector<std::string> lawDimensions()
{
    std::vector<std::string> out;
    for (const auto &row : dimensions())
        if (row.use.law) out.push_back(row.name);
    return out;
}

double dimensionNumber(const RunConfig &config, const std::string &name)
{
    const Dimension *row = namedDimension(name);
    return row && row->use.number ? row->use.number(config) : NAN;
}

bool isIntegerDimension(const std::string &name)
{
    const Dimension *row = namedDimension(name);
    return row && row->use.integer;
}

std::vector<std::string> headlineDimensions()
{
    std::vector<std::string> out;
    for (const auto &row : dimensions())
        if (row.use.headline) out.push_back(row.name);
    return out;
}

bool isShapeDimension(const std::string &name)
{
    const Dimension *row = namedDimension(name);
    return row && row->use.role == DimensionRole::Shape;
}

std::optional<SearchRange> defaultSearchRange(const std::string &name)
{
    const Dimension *row = namedDimension(name);
    return row ? row->use.search : std::nullopt;
}

std::string joinedNames(const std::vector<std::string> &names, const std::string &last)
{
    std::string out;
    for (size_t i = 0; i < names.size(); ++i)
        out += (i == 0 ? "" : i + 1 == names.size() ? " " + last + " " : ", ") + names[i];
    return out;
}

std::string modelAxisName(const std::string &key)
{
    for (const auto &row : dimensions())
        if (row.swept() && (row.field == "model." + key || row.name == key)) return row.name;
    return "model." + key;
}

std::optional<Dimension> findDimension(const std::string &name)
{
    if (const Dimension *row = namedDimension(name)) // a derived one is not swept: none
        return row->swept() ? std::optional<Dimension>(*row) : std::nullopt;
    // model.KEY where KEY is a named dimension (model.d_model): swept by the dimension's name only.
    if (name.rfind("model.", 0) == 0 && namedDimension(name.substr(6))) return std::nullopt;
    const auto field = findFieldAxis(name);
    if (!field) return std::nullopt;
    // A config-field row as an axis: its own reader, its canonical text written as it is.
    Dimension row;
    row.name = name;
    row.title = name;
    row.read = [read = field->read](const YamlField &f) { return textValue(read(f)); };
    row.write = [](YAML::Emitter &out, const AxisValue &value) { out << value.text; };
    row.apply = [apply = field->apply](RunConfig &config, const AxisValue &value,
                                       const std::map<std::string, const AxisValue *> &) {
        apply(config, value.text);
        return std::string();
    };
    row.resolved = field->text;
    return row;
}

const std::optional<Dimension> &DimensionLookup::operator()(const std::string &name)
{
    auto it = m_rows.find(name);
    if (it == m_rows.end()) it = m_rows.emplace(name, findDimension(name)).first;
    return it->second;
}

std::vector<AxisValue> readAxisValues(const Dimension &axis, const YamlField &field)
{
    if (!field.present()) fail(field, "an axis needs at least one value");
    if (axis.readForm)
        if (auto values = axis.readForm(field)) return *values;
    std::vector<AxisValue> values;
    if (field.node.IsSequence()) {
        if (field.node.size() > static_cast<size_t>(RunLimits::kMaxAxisValues))
            fail(field, beyondLimit(RunLimits::kMaxAxisValues, int64_t(field.node.size()),
                                    "values on one axis"));
        for (const auto &v : items(field)) values.push_back(axis.read(v));
        if (values.empty()) fail(field, "an axis needs at least one value");
        return values;
    }
    values.push_back(axis.read(field));
    return values;
}

std::optional<std::vector<AxisValue>> expandAxisForm(const Dimension &row, const std::string &name,
                                                     const YAML::Node &form)
{
    if (!row.readForm) return std::nullopt;
    YamlField field;
    field.file = "<session>";
    field.path = "sweep." + name;
    field.node = form;
    return row.readForm(field);
}

std::optional<YAML::Node> axisFormHolds(const Dimension &row, const SweepAxis &axis)
{
    if (axis.form.empty()) return std::nullopt;
    try {
        const YAML::Node node = YAML::Load(axis.form);
        if (expandAxisForm(row, axis.name, node) != axis.values) return std::nullopt;
        return node;
    } catch (const std::exception &) { // a form that no longer reads: the list is written
        return std::nullopt;
    }
}

std::string flowYaml(const YAML::Node &node)
{
    YAML::Emitter out;
    out << YAML::Flow << node;
    return out.c_str();
}

std::string logspaceForm(double from, double to, int64_t count)
{
    return "{logspace: {from: " + formatNumber(from) + ", to: " + formatNumber(to) +
           ", count: " + std::to_string(count) + "}}";
}

AxisValue numberAxisValue(double number)
{
    return numberValue(number);
}

std::string dimensionTitle(const std::string &name)
{
    const Dimension *row = namedDimension(name);
    return row ? row->title : name;
}

std::string dimensionSymbol(const std::string &name)
{
    const Dimension *row = namedDimension(name);
    return row && !row->symbol.empty() ? row->symbol : name;
}

std::string dimensionLetter(const std::string &name)
{
    const Dimension *row = namedDimension(name);
    return row && !row->letter.empty() ? row->letter : name;
}

} // namespace headlab
