/* Built without CUDA headers (no -DRS_HAVE_CUDA): `railscope record` still points CUDA_INJECTION64_PATH at
 * this library, and the CUDA driver looks for InitializeInjection in it. Answer "initialised" (1), so CUDA
 * starts as without railscope, and say once that there is no CUDA capture in this build. NCCL and NVTX
 * capture do not need the headers and stay on. */
#ifndef RS_HAVE_CUDA
#include "tracer/rs_tracer.h"

RS_EXPORT int InitializeInjection(void)
{
    rs_core_start();
    if (rs_on(RS_FAM_cuda)) rs_warn_once("this librailscope.so was built without CUDA headers: no CUDA/CUPTI capture");
    return 1;
}
#else
typedef int rs_cuda_stub_unused; /* ISO C wants a translation unit to declare something */
#endif
