// Session.h — a HeadLab session: the experiment, its sweep, every run's results and the view.
//
// A session is what a user saves and reopens (YAML, see docs/SESSION_FORMAT.md). The sweep is a
// base RunConfig plus named axes; their Cartesian product is the list of runs. Combinations that
// cannot run (a head count that does not divide d_model, say) are listed as skipped, with why.
//
// This header gathers the session's components for the layers above core/session: the data
// (SessionData.h), its expansion (SweepExpansion.h), its YAML (SessionYaml.h) and its storage
// (SessionStore.h, which reads and writes the stored layout: loadSession). Files inside
// core/session include the component they use, never this one, so that no two of them depend on
// each other (tests/layering/include_cycles.py).
#pragma once

#include "core/session/SessionData.h"
#include "core/session/SessionStore.h"
#include "core/session/SessionYaml.h"
#include "core/session/SweepExpansion.h"
