// Edge.h — where a function of one variable crosses zero between a point inside a region (f ≤ 0)
// and one outside it (f > 0): the edges of the profile-likelihood intervals (Logistic.cpp,
// JointLaw.cpp, Thresholds.cpp), where each evaluation is a fit of its own. Torch-free.
#pragma once

#include <cmath>

namespace headlab {

// The Illinois variant of regula falsi (Dowell & Jarratt 1971): the secant through the bracket's
// ends, halving the weight of an end that has stayed put twice, so that it converges
// superlinearly where bisection gains one bit per evaluation. Every step stays inside the
// bracket, so it never loses the crossing. f(inside) ≤ 0 < f(outside); the ends may be in either
// order. Stops when the bracket is narrower than `tolerance` or a step moves less than a tenth of
// it, after at most `evaluations` calls of f; returns the last point tried (the bracket's middle
// when it is already narrow).
// A profile's deviance minus its limit is near quadratic around an edge; its square root,
// √deviance − √limit, is near linear, and the secant then needs a handful of evaluations.
template <class F>
double edgeBetween(F f, double inside, double fInside, double outside, double fOutside,
                   double tolerance, int evaluations = 60)
{
    double x = NAN; // the last point tried
    int stuck = 0;  // > 0: the outside end moved last (that many times in a row); < 0: the inside
    for (int i = 0; i < evaluations && std::fabs(outside - inside) > tolerance; ++i) {
        double next = inside - fInside * (outside - inside) / (fOutside - fInside);
        // Keep a step inside the bracket by a fraction of the tolerance, so that a flat end
        // cannot stall it, and bisect where the secant is undefined (an end at infinity: a fit that
        // failed counts as outside).
        const double lo = std::fmin(inside, outside) + tolerance / 4;
        const double hi = std::fmax(inside, outside) - tolerance / 4;
        if (!std::isfinite(next) || !std::isfinite(fInside) || !std::isfinite(fOutside))
            next = (inside + outside) / 2;
        next = std::fmin(std::fmax(next, lo), hi);
        const double moved = std::fabs(next - x);
        x = next;
        const double fx = f(x);
        if (fx > 0) {
            outside = x;
            fOutside = fx;
            if (stuck > 0) fInside /= 2;
            stuck = stuck > 0 ? stuck + 1 : 1;
        } else {
            inside = x;
            fInside = fx;
            if (stuck < 0) fOutside /= 2;
            stuck = stuck < 0 ? stuck - 1 : -1;
        }
        if (moved < tolerance / 10 || fx == 0) break;
    }
    return std::isnan(x) ? (inside + outside) / 2 : x;
}

} // namespace headlab
