/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for the NVIDIA driver's libnvidia-ml.so.1 where no GPU is, built for the tests only
 * (never installed, never beside the programs): topotune loads NVML by dlopen, and this gives it
 * the GPUs FAKE_NVML_BUSES names (hex bus numbers in domain 0, comma-separated: "34,36"),
 * FAKE_NVML_NAME as their name, and no NVLink calls at all, as an NVML too old to have them.
 * FAKE_NVML_CRASH set: nvmlInit crashes the process (SIGSEGV), as a driver can on a sick GPU.
 * FAKE_NVML_PROCS=N: N compute processes run on the first GPU (a job).
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
