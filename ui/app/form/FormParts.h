// FormParts.h — what the boxes of the experiment form share: how a field's values become a sweep
// axis of the definition, or the base's value where the loaded session never swept it.
#pragma once

#include "core/session/Session.h"

#include <string>
#include <vector>

namespace headlab::ui::form {

const SweepAxis *findAxis(const Session &s, const std::string &name);
// Whether setAxis keeps an axis for these values: more than one, or the session swept it before.
// While it does, the base's value of that field is not touched: every run takes the axis' value,
// and rewriting the base from the first value changed a saved session for no reason.
bool keepsAxis(size_t values, bool hadAxis);
// Sets an axis' values, or, when there is one value and the session never swept it, the base.
void setAxis(Session &s, const std::string &name, std::vector<AxisValue> values, bool hadAxis);

} // namespace headlab::ui::form
