// Programmatic dependent launch (sm_90 and later): a kernel launched with
// cudaLaunchAttributeProgrammaticStreamSerialization may be scheduled while
// the kernel before it in the stream finishes, so the gap between the two
// closes; it waits for that kernel (and its memory) before touching memory.
#ifndef MATSERVE_KERNELS_GRID_DEPENDENCY_CUH_
#define MATSERVE_KERNELS_GRID_DEPENDENCY_CUH_

namespace matserve::kernels {

// Waits until the grid before this one in the stream has finished and its
// writes are visible (at once where this grid was launched without the
// attribute or nothing came before it).
__device__ inline void WaitForPriorGrid() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

// Lets the next grid in the stream be scheduled once every block of this one
// has called it (or finished). Kernels call it after WaitForPriorGrid, so
// that the next grid is launched only after all grids before this one have
// finished; the strip (sgemm_strip.cuh), which waits only at its end, relies
// on that. A split tail (SgemmWarpTiledKernel's wait_at_end) waits only at its
// end too, and leaves the call to its blocks' exit, after that wait.
__device__ inline void AllowDependentLaunch() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::);
#endif
}

}  // namespace matserve::kernels

#endif  // MATSERVE_KERNELS_GRID_DEPENDENCY_CUH_
