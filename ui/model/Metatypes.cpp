// Metatypes.cpp — see Metatypes.h.
#include "ui/model/Metatypes.h"

namespace headlab::ui {

void registerMetatypes()
{
    qRegisterMetaType<headlab::RunProgress>("headlab::RunProgress");
    qRegisterMetaType<headlab::RunResult>("headlab::RunResult");
    qRegisterMetaType<headlab::AttentionMaps>("headlab::AttentionMaps");
}

} // namespace headlab::ui
