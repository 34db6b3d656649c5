/* Offline symbolisation of CALL_STACK frames (analyzer/symbolize.c): function names from the .symtab and
 * .dynsym of the module files named in the trace, read with a small ELF reader that trusts nothing in the
 * file (a trace can name any path). */
#ifndef RAILSCOPE_SYMBOLIZE_H
#define RAILSCOPE_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

struct rs_symbolizer;

struct rs_symbolizer *rs_sym_new(void);
void rs_sym_free(struct rs_symbolizer *s);

/* The function containing `vaddr` (an ELF virtual address of the module: pc - load bias) in the ELF file
 * `path` (`n` bytes, not NUL-terminated), with *off = vaddr - the function's start. NULL when the file
 * cannot be read, is not a 64-bit little-endian ELF that makes sense, or no function symbol covers vaddr.
 * Each file is read once per symbolizer; the name stays valid until rs_sym_free. */
const char *rs_sym_lookup(struct rs_symbolizer *s, const char *path, size_t n, uint64_t vaddr, uint64_t *off);

/* C++ names readable: "foo::bar()" for "_ZN3foo3barEv", through libstdc++'s __cxa_demangle, dlopen'ed on first
 * use (no link-time dependency; the CLI is C). Returns `name` itself when it is not a mangled C++ name, is
 * longer than 4096 bytes (the demangler recurses on the name's structure), or libstdc++ is not there; else
 * a string valid until rs_sym_free. */
const char *rs_sym_demangle(struct rs_symbolizer *s, const char *name);

#endif
