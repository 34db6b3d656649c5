/* railscope: one binary, subcommands. Each subcommand lives in its own file as cmd_<name>(). */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} commands[] = {
    {"record", cmd_record, "run a command under the tracer: record [-o DIR] [--events LIST] -- CMD [ARGS...]"},
    {"dump", cmd_dump, "print every event of trace files: dump [--json] PATH..."},
    {"info", cmd_info, "header, event counts, drops and time span: info PATH..."},
    {"report", cmd_report, "analyse a run: report [--json] [--html FILE] PATH..."},
    {"export", cmd_export, "convert for viewers: export --format perfetto|chrome|kineto -o OUT PATH..."},
    {"doctor", cmd_doctor,
     "check a host for RDMA/GPUDirect problems: doctor [--json] [--sysfs-root DIR] [--env FILE] [--facts FILE] "
     "[--trace PATH]"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: railscope COMMAND [ARGS...]\n\n"
               "railscope traces RDMA verbs, CUDA copies/kernels, NCCL and NVTX in unmodified GPU training\n"
               "jobs and explains where each step's time went.\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\noptions:\n  %-9s %s\n  %-9s %s\n", "--help", "this text", "--version", "print the version and exit");
    fprintf(f, "\n'railscope COMMAND --help' describes each command.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("railscope %s\n", RS_VERSION_STRING);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "railscope: unknown command '%s' (try 'railscope --help')\n", argv[1]);
    return 2;
}
