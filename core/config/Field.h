// Field.h — a field table: one row per option of a config struct, from which its YAML reading and
// writing, its runs.csv columns and its part of the ensemble key are all derived.
//
// A row knows its YAML key (and any further keys it owns, e.g. `heads` owns `layers`), how to
// read itself from a located YamlField, how to write itself, whether it may differ between the
// runs of one ensemble, and which CSV columns it gives. The walkers below do the rest, so a new
// option is one row: it is read, written, exported and keeps ensembles apart without another edit.
//
// The ensemble key fails safe: a row is Shared unless marked PerRun, and a Shared row's written
// value is part of the key, so a new field splits ensembles (slower) rather than merging runs of
// different models (wrong). Torch-free.
#pragma once

#include "core/config/Yaml.h"

#include <yaml-cpp/yaml.h>

#include <atomic>
#include <bit>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace headlab {

// Whether runs that differ in a field may train as one ensemble (one batched model).
enum class Sharing {
    Shared, // part of the ensemble key: runs in one ensemble have the same value (the default)
    PerRun, // each run of an ensemble has its own (learning rate, seeds): left out of the key
};

template <typename S>
struct CsvColumn {
    std::string name;
    std::function<std::string(const S &)> value; // the cell's text, unquoted
};

template <typename S>
struct Field {
    std::vector<std::string> keys; // keys[0] is its YAML key; others it also reads (e.g. `layers`)
    std::string help;              // one line, for docs and --help
    Sharing sharing = Sharing::Shared;
    // Reads the row from `map` (the enclosing mapping) into `s`; only called when one of its keys
    // is present. Errors throw located SessionErrors.
    std::function<void(const yaml::YamlField &map, S &s)> read;
    // Writes `key: value` pairs (usually one) into an open mapping.
    std::function<void(YAML::Emitter &out, const S &s)> write;
    std::vector<CsvColumn<S>> csv; // the runs.csv columns it gives, in order
    // The row's part of the ensemble key; empty: the YAML it writes.
    std::function<std::string(const S &)> key;
    // For a row holding a file path resolved against the session's directory: applies `map` to
    // the path (SweepSession.h's anchorTaskPaths makes it absolute when a session is written to
    // another directory). Empty for other rows.
    std::function<void(S &, const std::function<std::string(const std::string &)> &map)> mapPath;
    // Holds the row's value in `s`, in memory, to the range its reader holds a file's text to:
    // "" when the reader would take it, else "key: message" (a nested row: "key.sub: message").
    // Empty for rows whose every in-memory value is valid (booleans, enums, text, seeds).
    std::function<std::string(const S &)> check;
    // The values it takes where they are few, as a file spells them (an enumeration's names,
    // true and false): what the form offers to complete. Empty for other rows.
    std::vector<std::string> choices;
    // Writes the row where `write` leaves its default out of a file (writtenUnlessDefault): what
    // the row's value reads as, for an axis and the form. Empty: `write` always writes it.
    std::function<void(YAML::Emitter &out, const S &s)> writeAlways;
};

template <typename S>
using FieldTable = std::vector<Field<S>>;

// Every key the rows own, for unknown-key checks with suggestions.
template <typename S>
std::vector<std::string> keysOf(const FieldTable<S> &table)
{
    std::vector<std::string> keys;
    for (const auto &row : table) keys.insert(keys.end(), row.keys.begin(), row.keys.end());
    return keys;
}

// Reads every row whose key is present in `map` (call checkKeys first).
template <typename S>
void readFields(const yaml::YamlField &map, const FieldTable<S> &table, S &s)
{
    for (const auto &row : table) {
        bool present = false;
        for (const auto &key : row.keys) present = present || yaml::child(map, key).present();
        if (present) row.read(map, s);
    }
}

// The first row of `table` whose check refuses its value in `s` ("key: message"), or "".
template <typename S>
std::string checkFields(const FieldTable<S> &table, const S &s)
{
    for (const auto &row : table)
        if (row.check)
            if (std::string problem = row.check(s); !problem.empty()) return problem;
    return {};
}

// A row's check made from its own reader: `value(s)`, the YAML the row writes (a scalar, or a
// list for heads and phases), is read back through `read` as the value of `key` (into a copy of
// `s`), so the range and its message are the reader's.
template <typename S>
std::function<std::string(const S &)>
rereadCheck(std::string key, std::function<void(const yaml::YamlField &, S &)> read,
            std::function<YAML::Node(const S &)> value)
{
    return [key = std::move(key), read = std::move(read), value = std::move(value)](const S &s) {
        YAML::Node map(YAML::NodeType::Map);
        map[key] = value(s);
        S scratch = s;
        try {
            read(yaml::YamlField{"", "", map, YAML::Mark(), nullptr}, scratch);
        } catch (const SessionError &e) {
            return e.keyPath() + ": " + e.message();
        }
        return std::string();
    };
}

template <typename S>
void writeFields(YAML::Emitter &out, const FieldTable<S> &table, const S &s)
{
    for (const auto &row : table) row.write(out, s);
}

// One row's key text: its own key function, or the flow YAML it writes.
template <typename S>
std::string rowKey(const Field<S> &row, const S &s)
{
    if (row.key) return row.key(s);
    YAML::Emitter out;
    out << YAML::Flow << YAML::BeginMap;
    row.write(out, s);
    out << YAML::EndMap;
    return out.c_str();
}

// The Shared rows' values: equal for configs that may share an ensemble.
template <typename S>
std::string ensembleKeyOf(const FieldTable<S> &table, const S &s)
{
    std::string key;
    for (const auto &row : table)
        if (row.sharing == Sharing::Shared) key += rowKey(row, s) + '|';
    return key;
}

// The CSV columns of a table, lifted through `part` to a containing struct T.
template <typename T, typename S>
std::vector<CsvColumn<T>> liftColumns(const FieldTable<S> &table,
                                      std::function<const S &(const T &)> part)
{
    std::vector<CsvColumn<T>> columns;
    for (const auto &row : table)
        for (const auto &column : row.csv)
            columns.push_back(
                {column.name, [part, value = column.value](const T &t) { return value(part(t)); }});
    return columns;
}

// Row builders for the common shapes: a member read in a range and written as it is.
// Reads `text`, one value as a person types it (a form's cell), into `s` through the row of
// `table` whose key is `key`: a form checks a value exactly as a session file's reader does.
// Returns "" when it was read, else the row's message ("must be at least 1, got 0").
template <typename S>
std::string readFieldText(const FieldTable<S> &table, const std::string &key,
                          const std::string &text, S &s)
{
    for (const auto &row : table) {
        if (row.keys.front() != key) continue;
        try {
            YAML::Node map(YAML::NodeType::Map);
            map[key] = YAML::Load(text.empty() ? std::string("null") : text);
            row.read(yaml::YamlField{"", "", map, YAML::Mark(), nullptr}, s);
            return {};
        } catch (const SessionError &e) {
            return e.message();
        } catch (const YAML::Exception &) {
            return "'" + text + "' is not a value";
        }
    }
    return "no field '" + key + "'";
}

namespace fields {

template <typename S, typename M>
Field<S> integer(std::string key, M S::*member, int64_t minimum, int64_t maximum, std::string help,
                 Sharing sharing = Sharing::Shared)
{
    Field<S> row{{key},
                 std::move(help),
                 sharing,
                 [key, member, minimum, maximum](const yaml::YamlField &map, S &s) {
                     s.*member = static_cast<M>(
                         yaml::readIntInRange(yaml::child(map, key), minimum, maximum));
                 },
                 [key, member](YAML::Emitter &out, const S &s) {
                     out << YAML::Key << key << YAML::Value << s.*member;
                 }};
    auto reread = rereadCheck<S>(key, row.read, [member](const S &s) {
        return YAML::Node(std::to_string(static_cast<int64_t>(s.*member)));
    });
    row.check = [member, minimum, maximum, reread](const S &s) {
        const auto value = static_cast<int64_t>(s.*member);
        return value >= minimum && value <= maximum ? std::string() : reread(s); // the usual case
    };
    return row;
}

template <typename S>
Field<S> unsignedInteger(std::string key, uint64_t S::*member, std::string help,
                         Sharing sharing = Sharing::Shared)
{
    return {{key},
            std::move(help),
            sharing,
            [key, member](const yaml::YamlField &map, S &s) {
                s.*member = yaml::readUnsigned(yaml::child(map, key));
            },
            [key, member](YAML::Emitter &out, const S &s) {
                out << YAML::Key << key << YAML::Value << s.*member;
            }};
}

// A number: `check` reads it with its range (readPositive, a readNumberInRange lambda, ...).
template <typename S>
Field<S> number(std::string key, double S::*member, double (*check)(const yaml::YamlField &),
                std::string help, Sharing sharing = Sharing::Shared)
{
    Field<S> row{{key},
                 std::move(help),
                 sharing,
                 [key, member, check](const yaml::YamlField &map, S &s) {
                     s.*member = check(yaml::child(map, key));
                 },
                 [key, member](YAML::Emitter &out, const S &s) {
                     out << YAML::Key << key << YAML::Value << yaml::formatNumber(s.*member);
                 }};
    // The reader on the number's own text; the last value it took is remembered (a sweep checks
    // the same few values in every run), so the usual case costs one comparison.
    auto lastTaken = std::make_shared<std::atomic<uint64_t>>(~uint64_t{0}); // a NaN never taken
    row.check = [key, member, check, lastTaken](const S &s) -> std::string {
        const double value = s.*member;
        const uint64_t bits = std::bit_cast<uint64_t>(value);
        if (bits == lastTaken->load(std::memory_order_relaxed)) return {};
        try {
            check(yaml::YamlField{"", key, YAML::Node(yaml::formatNumber(value)), YAML::Mark(),
                                  nullptr});
        } catch (const SessionError &e) {
            return key + ": " + e.message();
        }
        lastTaken->store(bits, std::memory_order_relaxed);
        return {};
    };
    return row;
}

template <typename S>
Field<S> boolean(std::string key, bool S::*member, std::string help,
                 Sharing sharing = Sharing::Shared)
{
    Field<S> row{{key},
                 std::move(help),
                 sharing,
                 [key, member](const yaml::YamlField &map, S &s) {
                     s.*member = yaml::readBool(yaml::child(map, key));
                 },
                 [key, member](YAML::Emitter &out, const S &s) {
                     out << YAML::Key << key << YAML::Value << s.*member;
                 }};
    row.choices = {"true", "false"};
    return row;
}

template <typename S>
Field<S> text(std::string key, std::string S::*member, std::string help,
              Sharing sharing = Sharing::Shared)
{
    return {{key},
            std::move(help),
            sharing,
            [key, member](const yaml::YamlField &map, S &s) {
                s.*member = yaml::readString(yaml::child(map, key));
            },
            [key, member](YAML::Emitter &out, const S &s) {
                out << YAML::Key << key << YAML::Value;
                yaml::writeText(out, s.*member);
            }};
}

template <typename S, typename E>
Field<S> enumeration(std::string key, E S::*member, std::initializer_list<yaml::EnumName<E>> names,
                     std::string help, Sharing sharing = Sharing::Shared)
{
    std::vector<yaml::EnumName<E>> list(names);
    Field<S> row{{key},
                 std::move(help),
                 sharing,
                 [key, member, list](const yaml::YamlField &map, S &s) {
                     s.*member = yaml::readEnumOf<E>(yaml::child(map, key), list);
                 },
                 [key, member](YAML::Emitter &out, const S &s) {
                     out << YAML::Key << key << YAML::Value << toString(s.*member);
                 }};
    for (const auto &n : list) row.choices.push_back(n.name);
    return row;
}

// A nested mapping with its own table, written in flow style when `flow`.
template <typename S, typename N>
Field<S> nested(std::string key, N S::*member, const FieldTable<N> *table, bool flow,
                std::string help)
{
    Field<S> row{{key},
                 std::move(help),
                 Sharing::Shared,
                 [key, member, table](const yaml::YamlField &map, S &s) {
                     const yaml::YamlField f = yaml::child(map, key);
                     yaml::checkKeys(f, keysOf(*table));
                     readFields(f, *table, s.*member);
                 },
                 [key, member, table, flow](YAML::Emitter &out, const S &s) {
                     out << YAML::Key << key << YAML::Value;
                     if (flow) out << YAML::Flow;
                     out << YAML::BeginMap;
                     writeFields(out, *table, s.*member);
                     out << YAML::EndMap;
                 }};
    row.csv = liftColumns<S, N>(*table, [member](const S &s) -> const N & { return s.*member; });
    row.key = [member, table](const S &s) { return "{" + ensembleKeyOf(*table, s.*member) + "}"; };
    row.check = [key, member, table](const S &s) {
        const std::string problem = checkFields(*table, s.*member);
        return problem.empty() ? problem : key + "." + problem;
    };
    return row;
}

// `row`, written only when its member differs from `fallback`: a key added to a table after
// sessions were saved leaves their text, and so their run files' names (a hash of the config's
// text), as they were when it keeps its default.
template <typename S, typename M>
Field<S> writtenUnlessDefault(Field<S> row, M S::*member, M fallback)
{
    row.writeAlways = row.write;
    row.write = [write = row.write, member, fallback](YAML::Emitter &out, const S &s) {
        if (!(s.*member == fallback)) write(out, s);
    };
    return row;
}

// `row` with the runs.csv columns `csv` in place of those it would give.
template <typename S>
Field<S> withCsv(Field<S> row, std::vector<CsvColumn<S>> csv)
{
    row.csv = std::move(csv);
    return row;
}

// `row`, set per run of an ensemble rather than shared by it (left out of the ensemble key).
template <typename S>
Field<S> perRun(Field<S> row)
{
    row.sharing = Sharing::PerRun;
    return row;
}

} // namespace fields

} // namespace headlab
