/* Fuzz target: whole files. The input is the file's bytes, as a damaged or hostile trace would be on disk;
 * seeds come from tests/corpus/ (real writer output and hand-made damage). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_drain_bytes(data, size, 1 << 20);
    return 0;
}
