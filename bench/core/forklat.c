/* What a traced fork() costs a program that forks (shells, a DataLoader's workers, subprocess): N forks one after
 * the other, each child reporting through a pipe the moment its own code runs again (fork's handlers, ours
 * included, are done), then _exit(0). Prints the medians: "fork_to_child_us X fork_to_reaped_us Y n N".
 * bench/core/run.sh runs it untraced and under the library alternately and prints the ratios. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lat_util.h"


int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 200;
    if (n < 1) n = 1;
    double *child = calloc((size_t)n, sizeof *child), *reaped = calloc((size_t)n, sizeof *reaped);
    if (!child || !reaped) return 2;
    for (int i = 0; i < n; i++) {
        int p[2];
        if (pipe(p) != 0) return perror("pipe"), 2;
        double t0 = now_us(), t1 = 0;
        pid_t k = fork();
        if (k < 0) return perror("fork"), 2;
        if (k == 0) {
            double t = now_us();
            _exit(write(p[1], &t, sizeof t) == sizeof t ? 0 : 1);
        }
        if (read(p[0], &t1, sizeof t1) != sizeof t1) return 2;
        int st;
        waitpid(k, &st, 0);
        child[i] = t1 - t0;
        reaped[i] = now_us() - t0;
        close(p[0]);
        close(p[1]);
    }
    qsort(child, (size_t)n, sizeof *child, cmp);
    qsort(reaped, (size_t)n, sizeof *reaped, cmp);
    printf("fork_to_child_us %.1f fork_to_reaped_us %.1f n %d\n", child[n / 2], reaped[n / 2], n);
    return 0;
}
