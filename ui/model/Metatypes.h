// Metatypes.h — registers core's value types with Qt so that they travel through queued signals
// from the training thread to the GUI thread.
#pragma once

#include "core/config/RunResult.h"
#include "core/train/HeadInspector.h"

#include <QMetaType>

Q_DECLARE_METATYPE(headlab::RunProgress)
Q_DECLARE_METATYPE(headlab::RunResult)
Q_DECLARE_METATYPE(headlab::AttentionMaps)

namespace headlab::ui {
// Idempotent; call before the first queued connection carrying a core value type.
void registerMetatypes();
} // namespace headlab::ui
