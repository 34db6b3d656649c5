/* sec_dlopen: loads the tracer library with dlopen() (the loader ignores LD_PRELOAD for setuid/setgid
 * programs, so this is how a privileged program could still end up with the tracer: the tracer itself
 * must then stay off, AT_SECURE). Prints "loaded" and exits 0; 3 if the library could not be loaded.
 * Usage: sec_dlopen LIB [FILE-TO-PRINT-ENV-INTO] */
#include <dlfcn.h>
#include <stdio.h>

/* ASan builds: a setgid process cannot read its own /proc/self/environ, so ASAN_OPTIONS is lost, and
 * LeakSanitizer's exit check (ptrace of its own threads) is refused in it: the built-in default is off. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "detect_leaks=0"; }

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        fprintf(stderr, "sec_dlopen: %s\n", dlerror());
        return 3;
    }
    printf("loaded\n");
    return 0;
}
