/* What the tracer costs a program that is exec'd under LD_PRELOAD (a launcher's or a shell script's commands,
 * nvidia-smi calls): the exec'd image's library start-up and exit. N rounds; each round forks and execs PROG
 * once untraced and once traced (LD_PRELOAD=LIB in the child's environment only: this process is not traced, so
 * its fork costs the same both ways), in alternating order, and times fork to reaped. Prints the medians and
 * their ratio: "untraced_us X traced_us Y ratio R n N".
 *   execlat LIB N PROG [ARGS...]     (RAILSCOPE_OUT and the rest of the environment are passed on as they are) */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One fork + exec of argv with envp, fork to reaped in microseconds; < 0 if it did not exit 0. */
static int devnull = -1;

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
        fprintf(stderr, "usage: execlat LIB N PROG [ARGS...]\n");
        return 2;
    }
    const char *lib = argv[1];
    int n = atoi(argv[2]);
    if (n < 1) n = 1;
    /* two environments: ours without LD_PRELOAD, and the same with LD_PRELOAD=LIB */
    size_t ne = 0;
    while (environ[ne]) ne++;
    char **plain = calloc(ne + 1, sizeof *plain), **traced = calloc(ne + 2, sizeof *traced);
    double *u = calloc((size_t)n, sizeof *u), *t = calloc((size_t)n, sizeof *t);
    char *pre = malloc(strlen(lib) + sizeof "LD_PRELOAD=");
    if (!plain || !traced || !u || !t || !pre) return 2;
    sprintf(pre, "LD_PRELOAD=%s", lib);
    devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
    size_t k = 0;
    for (size_t i = 0; i < ne; i++)
        if (strncmp(environ[i], "LD_PRELOAD=", 11)) plain[k] = traced[k] = environ[i], k++;
    traced[k] = pre;
    for (int i = 0; i < n; i++) {
        double a, b;
        if (i & 1) b = run_once(argv + 3, traced), a = run_once(argv + 3, plain);
        else a = run_once(argv + 3, plain), b = run_once(argv + 3, traced);
        if (a < 0 || b < 0) {
            fprintf(stderr, "execlat: %s did not exit 0 (%s)\n", argv[3], a < 0 ? "untraced" : "traced");
            return 1;
        }
        u[i] = a;
        t[i] = b;
    }
    qsort(u, (size_t)n, sizeof *u, cmp);
    qsort(t, (size_t)n, sizeof *t, cmp);
    printf("untraced_us %.0f traced_us %.0f ratio %.2f n %d\n", u[n / 2], t[n / 2], t[n / 2] / u[n / 2], n);
    return 0;
}
