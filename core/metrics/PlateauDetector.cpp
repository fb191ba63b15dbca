// PlateauDetector.cpp — plateau entry and exit steps of a loss curve.
#include "core/metrics/PlateauDetector.h"

#include "core/metrics/Metrics.h"

#include <cmath>

namespace headlab {

PlateauDetector::PlateauDetector(double band)
    : m_band(band)
{}

std::vector<double> PlateauDetector::additionLevels()
{
    const double ln10 = std::log(10.0);
    return {ln10, 2.0 / 3.0 * ln10, 1.0 / 3.0 * ln10};
}

std::vector<Plateau> PlateauDetector::detect(const Curve &curve,
                                             const std::vector<double> &levels) const
{
    const double halfWidth = m_band * std::log(10.0);
    std::vector<Plateau> out;
    for (double level : levels) {
        Plateau p;
        p.level = level;
        for (const auto &point : curve) {
            if (!std::isfinite(point.value)) break;
            if (p.entered < 0) {
                if (std::abs(point.value - level) <= halfWidth) p.entered = point.step;
            } else if (point.value < level - halfWidth) {
                p.left = point.step;
                break;
            }
        }
        out.push_back(p);
    }
    return out;
}

std::map<std::string, double> PlateauDetector::metrics(const Curve &curve) const
{
    std::map<std::string, double> m;
    const auto plateaus = detect(curve);
    const char *names[] = {"3", "2", "1"}; // thirds of ln 10
    for (size_t k = 0; k < plateaus.size(); ++k) {
        m[std::string(metric::kPlateauPrefix) + names[k] + "_entered"] =
            static_cast<double>(plateaus[k].entered);
        m[std::string(metric::kPlateauPrefix) + names[k] + "_left"] =
            static_cast<double>(plateaus[k].left);
    }
    if (!curve.empty())
        m[metric::kLeftLn10Plateau] =
            curve.back().value < metric::kLeftPlateauFraction * std::log(10.0) ? 1.0 : 0.0;
    return m;
}

} // namespace headlab
