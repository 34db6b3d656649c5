/* A stand-alone `railscope doctor` for the doctor tests: the same cmd_doctor() and checks, linked
 * without the rest of the CLI, so these tests do not depend on unrelated subcommands building. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "doctor") == 0) return cmd_doctor(argc - 1, argv + 1);
    return cmd_doctor(argc, argv);
}
