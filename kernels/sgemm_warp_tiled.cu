// The warp-tiled kernel's launches (launch_warp_tiled.cuh) for the shapes built
// at ptxas -O1 (kernels/CMakeLists.txt) but the 64-wide ones, which
// sgemm_warp_tiled_wide.cu builds beside them (each unit about half the
// compile time of one). At -O1 because ptxas's default -O3 reorders and renames
// the FMA loop's registers so that about a fifth of its FFMAs read two
// registers of one bank (sm_90 SASS of the 64 x 128 split-K loop: 223 of 1024
// against 108 at -O1). Measured on an H100 (docs/benchmarks.md), -O1 against
// -O3: 2048^3 92.3% of cuBLAS against 89.4%, 4096^3 95.3% against 92.6%,
// 8192^3 97.6% against 95.0%, 3072^3 108% against 104%; batches 128^3 x 1024
// 106% against 104%, 256^3 x 256 107% against 110%, 512^3 x 64 91% against 92%.
// The shapes of one-warp 32 x 32 warp tiles with room for 128 registers a lane
// gain at -O3 (sgemm_warp_tiled_o3.cu).
#include "kernels/launch_warp_tiled.cuh"

namespace matserve::kernels {

template LaunchWarpTiledFunction LaunchWarpTiled<WarpTiledSmall, false>;
template LaunchWarpTiledFunction LaunchWarpTiled<WarpTiledSmall, true>;
template LaunchWarpTiledFunction LaunchWarpTiled<WarpTiledSmallOffLines, false>;
template LaunchWarpTiledFunction LaunchWarpTiled<WarpTiledSmallOffLines, true>;
template LaunchWarpTiledFunction LaunchWarpTiled<WarpTiledMid, false>;
template LaunchWarpTiledFunction LaunchWarpTiled<WarpTiledMid, true>;
template LaunchWarpTiledFunction LaunchWarpTiled<WarpTiledQuad, false>;
template LaunchWarpTiledFunction LaunchWarpTiled<WarpTiledQuad, true>;
template LaunchWarpTiledFunction LaunchWarpTiled<WarpTiledBig, false>;
template LaunchWarpTiledFunction LaunchWarpTiled<WarpTiledBigAlone, false>;
template LaunchWarpTiledFunction LaunchWarpTiled<WarpTiledOneTile, false, true>;
template LaunchWarpTiledFunction
    LaunchWarpTiled<LongSteps<WarpTiledOneTile>, false, true>;

}  // namespace matserve::kernels
