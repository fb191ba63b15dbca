// SearchPlanner.h — a boundary search's next round: where each configuration that is still
// searching gets its next runs (SearchReport.h says which are, and docs/SEARCH.md why there).
// Round 0 trains `initial_points` values evenly over the range, ends included; later rounds put
// `points_per_round` points evenly inside each configuration's interval, or, with paired seeds,
// one run per seed in its own bracket. Torch-free.
#pragma once

#include "core/session/SessionData.h"

namespace headlab {

// Plans the next round (round 0 when there is none yet): appends its probes to session.search,
// expands the sweep to their runs (results kept) and returns how many runs they add; 0, with
// the session untouched, when runs are still to train or the search is over. Throws
// std::logic_error for a session without a search.
int planSearchRound(Session &session);

// The session as its search stood after round `round`: the later rounds' probes and their runs
// removed (results kept). For replaying a search: what it knew then.
Session searchUntilRound(const Session &session, int round);

} // namespace headlab
