/* What the tracer costs a program that is exec'd under LD_PRELOAD (a launcher's or a shell script's commands,
 * nvidia-smi calls): the exec'd image's library start-up and exit. N rounds; each round forks and execs PROG
 * once untraced and once under each library (LD_PRELOAD=LIB in the child's environment only: this process is not
 * traced, so its fork costs the same every way), in an order that rotates from round to round, and times fork to
 * reaped. Prints the medians and their ratios: "untraced_us X traced_us Y ratio R n N", with a second library
 * "untraced_us X traced_us Y ratio R traced2_us Y2 ratio2 R2 n N" (before/after: two builds side by side).
 *   execlat LIB[,LIB2] N PROG [ARGS...]   (RAILSCOPE_OUT and the rest of the environment are passed on as they are;
 *                                          PROG's stdout goes to /dev/null) */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lat_util.h"

extern char **environ;


static int devnull = -1;

/* One fork + exec of argv with envp, fork to reaped in microseconds; < 0 if it did not exit 0. */
static double run_once(char **argv, char **envp)
{
    double t0 = now_us();
    pid_t k = fork();
    if (k < 0) return -1;
    if (k == 0) {
        if (devnull >= 0) dup2(devnull, 1); /* the program's output is not the bench's */
        execve(argv[0], argv, envp);
        _exit(127);
    }
    int st;
    if (waitpid(k, &st, 0) != k || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return -1;
    return now_us() - t0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: execlat LIB[,LIB2] N PROG [ARGS...]\n");
        return 2;
    }
    int n = atoi(argv[2]);
    if (n < 1) n = 1;
    /* the environments: ours without LD_PRELOAD (v = 0), and the same with LD_PRELOAD=LIB for each library */
    enum { MAXV = 3 };
    char *libs = strdup(argv[1]), *env_pre[MAXV] = {0};
    int nv = 1;
    for (char *l = strtok(libs, ","); l && nv < MAXV; l = strtok(NULL, ",")) {
        env_pre[nv] = malloc(strlen(l) + sizeof "LD_PRELOAD=");
        if (!env_pre[nv]) return 2;
        sprintf(env_pre[nv++], "LD_PRELOAD=%s", l);
    }
    size_t ne = 0;
    while (environ[ne]) ne++;
    char **envs[MAXV];
    double *t[MAXV];
    for (int v = 0; v < nv; v++) {
        envs[v] = calloc(ne + 2, sizeof *envs[v]);
        t[v] = calloc((size_t)n, sizeof *t[v]);
        if (!envs[v] || !t[v]) return 2;
        size_t k = 0;
        for (size_t i = 0; i < ne; i++)
            if (strncmp(environ[i], "LD_PRELOAD=", 11)) envs[v][k++] = environ[i];
        envs[v][k] = env_pre[v]; /* NULL for the untraced one */
    }
    devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < nv; j++) {
            int v = (i + j) % nv;
            if ((t[v][i] = run_once(argv + 3, envs[v])) < 0) {
                fprintf(stderr, "execlat: %s did not exit 0 (%s)\n", argv[3], v ? env_pre[v] : "untraced");
                return 1;
            }
        }
    for (int v = 0; v < nv; v++) qsort(t[v], (size_t)n, sizeof *t[v], cmp);
    double u = t[0][n / 2];
    printf("untraced_us %.0f traced_us %.0f ratio %.2f", u, t[1][n / 2], t[1][n / 2] / u);
    if (nv > 2) printf(" traced2_us %.0f ratio2 %.2f", t[2][n / 2], t[2][n / 2] / u);
    printf(" n %d\n", n);
    return 0;
}
