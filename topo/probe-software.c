/* SPDX-License-Identifier: MIT */
/* Software versions of the live machine: driver, NCCL, hwloc, kernel. */
#include "topo/internal.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/log.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul ..." -> "580.65.06" */
static char *driver_from_proc(void)
{
    struct util_buf b = UTIL_BUF_INIT;
    char *version = NULL;
    if (util_sysfs_read_line("/proc/driver/nvidia/version", &b) == 0) {
        const char *p = strstr(util_buf_str(&b), "Kernel Module");
        char v[64];
        if (p && sscanf(p + strlen("Kernel Module"), "%63s", v) == 1)
            version = topo_text(v);
    }
    util_buf_release(&b);
    return version;
}

static void *open_nccl(void)
{
    void *lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    const char *homes[] = {getenv("NCCL_HOME"), getenv("CUDA_HOME"), "/usr/local/cuda"};
    const char *subdirs[] = {"lib", "lib64"};
    for (size_t i = 0; !lib && i < 3; i++)
        for (size_t k = 0; !lib && homes[i] && k < 2; k++) {
            struct util_buf p = UTIL_BUF_INIT;
            util_buf_addf(&p, "%s/%s/libnccl.so.2", homes[i], subdirs[k]);
            lib = dlopen(p.data, RTLD_NOW | RTLD_LOCAL);
            util_buf_release(&p);
        }
    return lib;
}

/* NCCL's version code: major*10000+minor*100+patch since 2.9, major*1000+minor*100+patch before. */
static char *nccl_version(void)
{
    void *lib = open_nccl();
    int (*get)(int *) = NULL;
    int code = 0;
    char buf[32];
    if (!lib)
        return NULL;
    *(void **)&get = dlsym(lib, "ncclGetVersion");
    if (!get || get(&code) != 0 || code <= 0)
        return NULL;
    if (code >= 20900)
        snprintf(buf, sizeof(buf), "%d.%d.%d", code / 10000, (code % 10000) / 100, code % 100);
    else
        snprintf(buf, sizeof(buf), "%d.%d.%d", code / 1000, (code % 1000) / 100, code % 100);
    return topo_text(buf);
}

/* Open MPI's library version, asked without initialising MPI (allowed since MPI-3). */
static char *mpi_version(void)
{
    void *lib = dlopen("libmpi.so.40", RTLD_NOW | RTLD_LOCAL);
    int (*get)(char *, int *) = NULL;
    char buf[8192];
    int len = 0;
    if (!lib)
        return NULL;
    *(void **)&get = dlsym(lib, "MPI_Get_library_version");
    if (!get || get(buf, &len) != 0)
        return NULL;
    buf[strcspn(buf, ",\n")] = '\0';
    return topo_text(buf);
}

/* Replaces *field with value (this machine's, read now); value may be NULL. */
static void set(char **field, char *value)
{
    free(*field);
    *field = value;
}

void topo_probe_software(struct topo *t)
{
    struct util_buf b = UTIL_BUF_INIT;
    if (!t->software.driver)
        t->software.driver = driver_from_proc();
    set(&t->software.nccl, nccl_version());
    set(&t->software.mpi, mpi_version());
    set(&t->software.hwloc, topo_strdup(HWLOC_VERSION));
    if (util_sysfs_read_line("/proc/sys/kernel/osrelease", &b) == 0)
        set(&t->software.kernel, topo_text(util_buf_str(&b)));
    util_buf_release(&b);
}
