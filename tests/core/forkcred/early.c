/* A library initialised before railscope (a DT_NEEDED library's constructor runs first): it registers fork
 * handlers that change ids (EARLY_PREPARE / EARLY_PARENT / EARLY_CHILD name which), for tests/core/fork_handlers.t.
 * EARLY_PARENT_FORK: its parent handler forks once itself (a helper process), inside our fork's window.
 * EARLY_CHILD_FORK: its child handler forks once (in the child, before our child handler): the grandchild then
 * goes on through the rest of the outer fork's child handlers, ours included, and returns from the program's
 * fork() as a second "child". */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void pre(void)
{
    if (getenv("EARLY_PREPARE")) setresuid(-1, -1, -1);
}
static int forking;
static void par(void)
{
    if (getenv("EARLY_PARENT")) setresuid(-1, -1, -1);
    if (getenv("EARLY_PARENT_FORK") && !forking) {
        forking = 1;
        pid_t p = fork();
        if (p == 0) _exit(0);
        if (p > 0) waitpid(p, NULL, 0);
        forking = 0;
    }
}
static void chi(void)
{
    if (getenv("EARLY_CHILD")) setresuid(-1, -1, -1);
    if (getenv("EARLY_CHILD_FORK") && !forking) {
        forking = 1;
        fork(); /* both go on as the program's child (forker writers) */
        forking = 0;
    }
}
__attribute__((constructor)) static void init(void) { pthread_atfork(pre, par, chi); }
