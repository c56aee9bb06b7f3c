// The warp-tiled kernel's launches (launch_warp_tiled.cuh) for the 64-wide
// shapes, WarpTiledWide and WarpTiledTall, with K steps of 16 and of 32, and
// the grouped launch's (WarpTiledWide), built at ptxas -O1 as
// sgemm_warp_tiled.cu says, in a translation unit of their own so that the two
// build side by side.
#include "kernels/launch_warp_tiled.cuh"

namespace matserve::kernels {

template LaunchWarpTiledFunction LaunchWarpTiled<WarpTiledWide, false>;
template LaunchWarpTiledFunction LaunchWarpTiled<WarpTiledWide, true>;
template LaunchWarpTiledFunction LaunchWarpTiled<WarpTiledTall, false>;
template LaunchWarpTiledFunction LaunchWarpTiled<WarpTiledTall, true>;
template LaunchWarpTiledFunction
    LaunchWarpTiled<LongSteps<WarpTiledWide>, false>;
template LaunchWarpTiledFunction
    LaunchWarpTiled<LongSteps<WarpTiledWide>, true>;
template LaunchWarpTiledFunction
    LaunchWarpTiled<LongSteps<WarpTiledTall>, false>;
template LaunchWarpTiledFunction
    LaunchWarpTiled<LongSteps<WarpTiledTall>, true>;
template cudaError_t LaunchWarpTiledGrouped<WarpTiledWide>(
    const GroupedGemmEntry*, int64_t, int64_t, int, cudaStream_t);

}  // namespace matserve::kernels
