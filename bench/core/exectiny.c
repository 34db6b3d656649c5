/* The small C program bench/core/run.sh execs under the tracer (execlat): a line on stdout, exit 0. */
#include <stdio.h>

int main(void) { return puts("exectiny") < 0; }
