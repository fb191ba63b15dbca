// PlateauDetector.h — where a loss curve sits on, enters and leaves the addition task's plateaus.
//
// The answer loss falls in steps (EXPERIMENTS.md §1): ln 10 (the model knows the answer is a
// digit), (2/3) ln 10 (one digit position learned), (1/3) ln 10 (two), then near 0. For each level
// the detector reports the first step the curve came within a band around it, and the first later
// step it went below the band. Torch-free.
#pragma once

#include "core/config/RunResult.h"

#include <map>
#include <string>
#include <vector>

namespace headlab {

struct Plateau {
    double level = 0.0;   // the loss of the plateau
    int64_t entered = -1; // first step within the band, -1 if never
    int64_t left =
        -1; // first step below the band after entering, -1 if still on it (or never on it)
};

class PlateauDetector {
public:
    // band: half-width of the band around each level, as a fraction of ln 10.
    explicit PlateauDetector(double band = 0.04);
    static std::vector<double> additionLevels(); // ln 10, (2/3) ln 10, (1/3) ln 10
    std::vector<Plateau> detect(const Curve &curve,
                                const std::vector<double> &levels = additionLevels()) const;
    // The metrics a run records: plateau_<k>_entered / plateau_<k>_left for k = 3, 2, 1 (thirds of
    // ln 10), and left_ln10_plateau (final loss below (5/6) ln 10, half way to the next plateau).
    std::map<std::string, double> metrics(const Curve &curve) const;

private:
    double m_band;
};

} // namespace headlab
