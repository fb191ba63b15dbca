// FormParts.cpp — see FormParts.h.
#include "ui/app/form/FormParts.h"

#include <algorithm>

namespace headlab::ui::form {

const SweepAxis *findAxis(const Session &s, const std::string &name)
{
    for (const auto &a : s.axes)
        if (a.name == name) return &a;
    return nullptr;
}

bool keepsAxis(size_t values, bool hadAxis)
{
    return values > 1 || hadAxis;
}

void setAxis(Session &s, const std::string &name, std::vector<AxisValue> values, bool hadAxis)
{
    auto it = std::find_if(s.axes.begin(), s.axes.end(),
                           [&](const SweepAxis &a) { return a.name == name; });
    if (values.size() <= 1 && !hadAxis) {
        if (it != s.axes.end()) s.axes.erase(it);
        return;
    }
    if (it != s.axes.end())
        it->values = std::move(values);
    else
        s.axes.push_back(SweepAxis{name, std::move(values)});
}

} // namespace headlab::ui::form
