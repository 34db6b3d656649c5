/* Weak placeholders so the CLI links while subcommands are being written; each real cmd_<name>()
 * overrides its placeholder. A placeholder says plainly that the command does not exist yet. */
#include <stdio.h>

#include "cli.h"

#define RS_PLACEHOLDER(name)                                                                   \
    __attribute__((weak)) int cmd_##name(int argc, char **argv)                                \
    {                                                                                          \
        (void)argc;                                                                            \
        (void)argv;                                                                            \
        fprintf(stderr, "railscope: '" #name "' is not available in this build\n");           \
        return 2;                                                                              \
    }
RS_PLACEHOLDER(record)
RS_PLACEHOLDER(dump)
RS_PLACEHOLDER(info)
RS_PLACEHOLDER(report)
RS_PLACEHOLDER(export)
RS_PLACEHOLDER(doctor)
