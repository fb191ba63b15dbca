// SearchBox.h — the form's boundary-search box (docs/SEARCH.md): on or off; along which dimension
// (the searchable rows of the dimension table) and over which range; the seeds, how many, the
// interval width and the budget; the model (a curve per configuration, or one with the law inside
// it) and the law's width. It writes the session's `search:` block; the search then chooses its
// axis's values and the seeds, so the form's fields for those are off while it is on
// (searchChanged).
#pragma once

#include "ui/app/form/FormBox.h"

#include "core/session/search/SearchSpec.h"

#include <optional>
#include <string>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace headlab::ui {

class SearchBox : public FormBox {
    Q_OBJECT
public:
    explicit SearchBox(QWidget *parent = nullptr);
    void load(const Session &session) override;
    void build(Session &definition, const Session &loaded, QStringList &errors) const override;
    bool searching() const;
    std::string axis() const; // the dimension searched along
    QLabel *errorLine() const { return m_error; }

    QCheckBox *onBox() const { return m_on; }
    QComboBox *axisBox() const { return m_axis; }
    QLineEdit *fromEdit() const { return m_from; }
    QLineEdit *toEdit() const { return m_to; }
    QComboBox *modelBox() const { return m_model; }
    QDoubleSpinBox *lawWidthBox() const { return m_lawWidth; }
    QComboBox *seedsBox() const { return m_seeds; }
    QSpinBox *replicatesBox() const { return m_replicates; }

Q_SIGNALS:
    // On or off, or another axis: the fields a search takes over change.
    void searchChanged();

private:
    SearchSpec::SeedPlan seedPlan() const; // the seeds box's plan
    void updateControls();

    std::optional<SearchSpec> m_loaded; // the loaded session's search
    bool m_loading = false;
    QCheckBox *m_on;
    QWidget *m_rows;
    QComboBox *m_axis;
    QLineEdit *m_from, *m_to; // the searched range, exact numbers
    QSpinBox *m_replicates, *m_budget;
    QDoubleSpinBox *m_width;
    QComboBox *m_model;         // separate or joint (SearchSpec::Model)
    QDoubleSpinBox *m_lawWidth; // search.law_width, joint model only; 0: off
    QComboBox *m_seeds;         // fresh, replicates or paired (SearchSpec::SeedPlan)
    QLabel *m_countLabel;       // "replicates", or "seeds" for paired seeds
    QLabel *m_error;
};

} // namespace headlab::ui
