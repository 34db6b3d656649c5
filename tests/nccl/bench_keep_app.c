/* The bench's family switches (tracer/bench_hooks.c) seen from a program, as bench/gpu/parttoggle.py uses them:
 * found with dlsym in the global scope, NVTX ranges pushed with every family on, then with only the core's, then
 * with all back. Prints what the switches and NVTX returned: the tracer must not change NVTX's nesting levels. */
#include <dlfcn.h>
#include <stdio.h>

#include <nvtx3/nvToolsExt.h>

static int ranges(const char *word)
{
    int levels = 0;
    char msg[32];
    for (int i = 0; i < 5; i++) {
        snprintf(msg, sizeof msg, "%s %d", word, i);
        levels += nvtxRangePushA(msg);
        levels += nvtxRangePop();
    }
    return levels;
}

int main(void)
{
    int (*keep)(unsigned) = (int (*)(unsigned))dlsym(RTLD_DEFAULT, "railscope_bench_keep");
    int (*cuda)(int, int, int) = (int (*)(int, int, int))dlsym(RTLD_DEFAULT, "railscope_bench_cuda");
    int l1 = ranges("on");
    int off = keep ? keep(1u) : -2; /* the core alone */
    int l2 = ranges("off");
    int back = keep ? keep(0) : -2;
    int l3 = ranges("back");
    printf("keep=%d back=%d cuda=%d levels=%d,%d,%d\n", off, back, cuda ? cuda(0, 0, -1) : -2, l1, l2, l3);
    return 0;
}
