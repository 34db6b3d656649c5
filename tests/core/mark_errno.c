/* railscope_mark must leave errno as it found it, also when its string lock is contended (a futex wait's EAGAIN
 * or ETIMEDOUT leaked into the program's errno in 16620 of 800000 calls, helper-90, session 31).
 * Usage: mark_errno. Four threads x 200000 marks over 3000 names each; prints "errno changed C of 800000". */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

static void (*mark)(const char *, uint64_t);
static _Atomic long changed;

static void *marker(void *a)
{
    char name[32];
    for (long i = 0; i < 200000; i++) {
        snprintf(name, sizeof name, "n%ld-%ld", (long)(intptr_t)a, i % 3000);
        errno = 4242;
        mark(name, (uint64_t)i);
        if (errno != 4242) changed++;
    }
    return a;
}

int main(void)
{
    mark = (void (*)(const char *, uint64_t))dlsym(RTLD_DEFAULT, "railscope_mark");
    if (!mark) {
        printf("no railscope_mark (not traced)\n");
        return 2;
    }
    pthread_t t[4];
    for (long i = 0; i < 4; i++) pthread_create(&t[i], NULL, marker, (void *)i);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    printf("errno changed %ld of 800000\n", (long)changed);
    return 0;
}
