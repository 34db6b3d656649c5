/* A stand-in libnvidia-ml.so.1 for the CI tests: one device whose PCIe byte counters (fields 197/198)
 * grow by 1000 per read and whose NVLink counters (138/139) are not supported, as on a PCIe-only GPU. */
#include <string.h>

#define EXPORT __attribute__((visibility("default")))
typedef struct {
    unsigned fieldId, scopeId;
    long long timestamp, latencyUsec;
    int valueType, nvmlReturn;
    unsigned long long value;
} field_t;

static unsigned long long counter;
EXPORT int nvmlInit_v2(void) { return 0; }
EXPORT int nvmlDeviceGetCount_v2(unsigned *n)
{
    *n = 1;
    return 0;
}
EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **h)
{
    *h = (void *)(unsigned long)(0x100 + i);
    return 0;
}
EXPORT int nvmlDeviceGetFieldValues(void *dev, int n, field_t *v)
{
    (void)dev;
    counter += 1000;
    for (int i = 0; i < n; i++) {
        if (v[i].fieldId == 197 || v[i].fieldId == 198) {
            v[i].nvmlReturn = 0;
            v[i].value = counter + v[i].fieldId;
        } else {
            v[i].nvmlReturn = 3; /* NVML_ERROR_NOT_SUPPORTED */
        }
    }
    return 0;
}
