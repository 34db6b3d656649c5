/* Host work of a command, counted by the CPU: instructions retired and CPU time of every thread of the command
 * and its children (perf_event_open, inherited), for bench/gpu/hostcost.py.
 *
 *   gcc -O2 -o hostcost bench/gpu/hostcost.c
 *   hostcost OUT.json -- CMD ARGS...
 *
 * Why: on the H200 host a step's wall time wanders by 5-20 % between processes and from second to second, so a
 * tracer's 1 % is lost in it; the instructions a step executes do not wander (the CPU's frequency, a neighbour
 * VM, a migration change how long they take, not how many there are). What a tracer adds to the host is what it
 * adds to the instruction count. Counts user and kernel instructions where the kernel lets us (perf_event_paranoid),
 * else user only (said in the output). Writes {"instructions", "task_clock_ns", "kernel_counted", "status"}. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int open_counter(uint32_t type, uint64_t config, pid_t pid, int exclude_kernel)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = type;
    a.config = config;
    a.disabled = 1;
    a.inherit = 1;
    a.enable_on_exec = 1;
    a.exclude_kernel = (unsigned)exclude_kernel;
    a.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &a, pid, -1, -1, 0);
}

int main(int argc, char **argv)
{
    if (argc < 4 || strcmp(argv[2], "--")) {
        fprintf(stderr, "usage: hostcost OUT.json -- CMD [ARGS...]\n");
        return 2;
    }
    int go[2];
    if (pipe(go)) return perror("hostcost: pipe"), 1;
    pid_t pid = fork();
    if (pid < 0) return perror("hostcost: fork"), 1;
    if (pid == 0) { /* wait until the counters are attached, then exec (enable_on_exec starts them) */
        char c;
        close(go[1]);
        if (read(go[0], &c, 1) != 1) _exit(127);
        execvp(argv[3], argv + 3);
        fprintf(stderr, "hostcost: %s: %s\n", argv[3], strerror(errno));
        _exit(127);
    }
    close(go[0]);
    int kernel = 1;
    int ins = open_counter(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, pid, 0);
    if (ins < 0) {
        kernel = 0;
        ins = open_counter(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, pid, 1);
    }
    int clk = open_counter(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, pid, 0);
    if (ins < 0) fprintf(stderr, "hostcost: no instruction counter here (%s): CPU time only\n", strerror(errno));
    if (write(go[1], "g", 1) != 1) return perror("hostcost: write"), 1;
    close(go[1]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    uint64_t n_ins = 0, n_clk = 0;
    if (ins >= 0 && read(ins, &n_ins, sizeof n_ins) != sizeof n_ins) n_ins = 0;
    if (clk >= 0 && read(clk, &n_clk, sizeof n_clk) != sizeof n_clk) n_clk = 0;
    FILE *f = fopen(argv[1], "w");
    if (!f) return perror("hostcost: output"), 1;
    fprintf(f, "{\"instructions\": %llu, \"instructions_ok\": %d, \"kernel_counted\": %d, \"task_clock_ns\": %llu, "
               "\"status\": %d}\n",
            (unsigned long long)n_ins, ins >= 0, kernel && ins >= 0, (unsigned long long)n_clk,
            WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    fclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
