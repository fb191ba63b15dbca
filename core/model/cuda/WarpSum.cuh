// WarpSum.cuh — the sum of one float over the 32 lanes of a warp, by butterfly shuffles: every
// lane gets the whole sum, added in the same order on every lane. Device code of the row kernels
// (UnitNorm.cu, LayerNorm.cu), which give each warp one row.
#pragma once

namespace headlab::cuda {

__device__ __forceinline__ float warpSum(float v)
{
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

} // namespace headlab::cuda
