// The warp-tiled kernel's launches (launch_warp_tiled.cuh) for the shapes of
// one-warp 32 x 32 warp tiles whose blocks per SM leave a lane 128 registers,
// WarpTiledTiny (and WarpTiledTinyUnrolled) and WarpTiledQuadFew, built at
// ptxas's default -O3 where the others are built at -O1 (sgemm_warp_tiled.cu).
// Measured on an H200 (ms, docs/benchmarks.md, session 27), -O3 against -O1:
// WarpTiledTiny at 50^3 x 100 0.0059 against 0.0063, 77^3 x 300 0.0243 against
// 0.0261, 250x251x250 x 5 0.0143 against 0.0149 (135x136x137 x 200 0.0574
// against 0.0569); WarpTiledQuadFew at 127^3 x 100 0.0198 against 0.0207,
// 99x101x99 x 130 0.0177 against 0.0191, 120x121x120 x 50 0.0118 against
// 0.0122. On an H100 (session 26), the other shapes did not gain at -O3:
// WarpTiledQuad (five blocks per SM, up to 102 registers; some instances
// spilled 8-16 bytes) from 13% ahead to 4% behind, WarpTiledMid 7-12% behind,
// the 64-wide tiles 3%. WarpTiledQuadFew at -O1 lost on an H200 in the cost
// model's range too (docs/benchmarks.md, session 64; 36 batches it picks
// four-warp tiles for, 2.8% behind, none ahead: 1058x735x1088 x 4 0.1889
// against 0.1796), though its loops there count fewer FFMAs that read two
// registers of one bank (tools/sass_loop.py: 25.2% against 28.1%, both
// operands element by element).
#include "kernels/launch_warp_tiled.cuh"

namespace matserve::kernels {

template LaunchWarpTiledFunction LaunchWarpTiled<WarpTiledTiny, false>;
template LaunchWarpTiledFunction LaunchWarpTiled<WarpTiledTiny, true>;
template LaunchWarpTiledFunction LaunchWarpTiled<WarpTiledTinyUnrolled, false>;
template LaunchWarpTiledFunction LaunchWarpTiled<WarpTiledTinyUnrolled, true>;
template LaunchWarpTiledFunction LaunchWarpTiled<WarpTiledQuadFew, false>;
template LaunchWarpTiledFunction LaunchWarpTiled<WarpTiledQuadFew, true>;

}  // namespace matserve::kernels
