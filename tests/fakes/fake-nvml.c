/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for the NVIDIA driver's libnvidia-ml.so.1 where no GPU is, built for the tests only
 * (never installed, never beside the programs): topotune loads NVML by dlopen, and this gives it
 * the GPUs FAKE_NVML_BUSES names (hex bus numbers in domain 0, comma-separated: "34,36"),
 * FAKE_NVML_NAME as their name, and no NVLink calls at all, as an NVML too old to have them.
 * FAKE_NVML_CRASH set: nvmlInit crashes the process (SIGSEGV), as a driver can on a sick GPU.
 * FAKE_NVML_PROCS=N: N compute processes run on the first GPU (a job).
 * The last GPU's health: FAKE_NVML_REMAP "pending" or "failed" (its row remapping), FAKE_NVML_ECC=N
 * (uncorrectable ECC errors since the driver loaded), FAKE_NVML_EVENTS=MASK (clock event reasons,
 * as strtoull reads it); each "unsupported" makes the call fail as on a GPU without it.
 * FAKE_NVML_LOST=N: the last GPU's handle comes back with NVML's error N (15: lost).
 * Only the calls the probe needs; every other symbol is absent, as a driver's may be.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GPUS 64

static unsigned buses[MAX_GPUS], nbuses;

int nvmlInit_v2(void);
int nvmlShutdown(void);
int nvmlSystemGetDriverVersion(char *version, unsigned length);
int nvmlDeviceGetCount_v2(unsigned *count);
int nvmlDeviceGetHandleByIndex_v2(unsigned index, void **device);
int nvmlDeviceGetPciInfo_v3(void *device, unsigned char *pci);
int nvmlDeviceGetName(void *device, char *name, unsigned length);
int nvmlDeviceGetComputeRunningProcesses_v3(void *device, unsigned *count, void *infos);
int nvmlDeviceGetRemappedRows(void *device, unsigned *corr, unsigned *unc, unsigned *pending,
                              unsigned *failed);
int nvmlDeviceGetTotalEccErrors(void *device, int type, int counter, unsigned long long *count);
int nvmlDeviceGetCurrentClocksEventReasons(void *device, unsigned long long *reasons);

int nvmlInit_v2(void)
{
    if (getenv("FAKE_NVML_CRASH"))
        raise(SIGSEGV);
    const char *s = getenv("FAKE_NVML_BUSES");
    char *end;
    nbuses = 0;
    while (s && *s && nbuses < MAX_GPUS) {
        unsigned long v = strtoul(s, &end, 16);
        if (end == s)
            break;
        buses[nbuses++] = (unsigned)v;
        s = *end == ',' ? end + 1 : end;
    }
    return 0;
}

int nvmlShutdown(void)
{
    return 0;
}

int nvmlSystemGetDriverVersion(char *version, unsigned length)
{
    snprintf(version, length, "%s", "999.99.99");
    return 0;
}

int nvmlDeviceGetCount_v2(unsigned *count)
{
    *count = nbuses;
    return 0;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned index, void **device)
{
    if (index >= nbuses)
        return 2; /* NVML_ERROR_INVALID_ARGUMENT */
    if (getenv("FAKE_NVML_LOST") && index + 1 == nbuses)
        return atoi(getenv("FAKE_NVML_LOST"));
    *device = &buses[index];
    return 0;
}

/* nvmlPciInfo_t: busIdLegacy[16], then domain, bus, device (unsigned each) */
int nvmlDeviceGetPciInfo_v3(void *device, unsigned char *pci)
{
    unsigned v[3] = {0, *(unsigned *)device, 0};
    memset(pci, 0, 16);
    memcpy(pci + 16, v, sizeof(v));
    return 0;
}

int nvmlDeviceGetName(void *device, char *name, unsigned length)
{
    (void)device;
    const char *n = getenv("FAKE_NVML_NAME");
    snprintf(name, length, "%s", n ? n : "NVIDIA H100 80GB HBM3");
    return 0;
}

/* Asked with no room (count 0), NVML gives the count and NVML_ERROR_INSUFFICIENT_SIZE (7) when
 * processes run, else success. */
int nvmlDeviceGetComputeRunningProcesses_v3(void *device, unsigned *count, void *infos)
{
    (void)infos;
    const char *n = getenv("FAKE_NVML_PROCS");
    unsigned procs = n && device == &buses[0] ? (unsigned)atoi(n) : 0;
    unsigned room = *count;
    *count = procs;
    return procs > room ? 7 : 0;
}

#define NVML_ERROR_NOT_SUPPORTED 3

/* The value of variable name for device (the last GPU's; 0 for the others), or -1 for
 * "unsupported". */
static long long health(const void *device, const char *name)
{
    const char *v = getenv(name);
    if (v && !strcmp(v, "unsupported"))
        return -1;
    return v && nbuses && device == &buses[nbuses - 1] ? (long long)strtoull(v, NULL, 0) : 0;
}

int nvmlDeviceGetRemappedRows(void *device, unsigned *corr, unsigned *unc, unsigned *pending,
                              unsigned *failed)
{
    const char *v = getenv("FAKE_NVML_REMAP");
    if (v && !strcmp(v, "unsupported"))
        return NVML_ERROR_NOT_SUPPORTED;
    int last = v && nbuses && device == &buses[nbuses - 1];
    *corr = 0;
    *unc = last ? 1 : 0;
    *pending = last && !strcmp(v, "pending");
    *failed = last && !strcmp(v, "failed");
    return 0;
}

int nvmlDeviceGetTotalEccErrors(void *device, int type, int counter, unsigned long long *count)
{
    long long n = health(device, "FAKE_NVML_ECC");
    if (n < 0)
        return NVML_ERROR_NOT_SUPPORTED;
    *count = type == 1 && counter == 0 ? (unsigned long long)n : 0;
    return 0;
}

int nvmlDeviceGetCurrentClocksEventReasons(void *device, unsigned long long *reasons)
{
    long long mask = health(device, "FAKE_NVML_EVENTS");
    if (mask < 0)
        return NVML_ERROR_NOT_SUPPORTED;
    *reasons = mask ? (unsigned long long)mask : 0x1; /* at rest: GpuIdle */
    return 0;
}
