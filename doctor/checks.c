/* SPDX-License-Identifier: MIT */
/*
 * The checks. Facts come from the topology (hardware, P2P, ACS, IOMMU, /dev/shm,
 * memlock, all read under TOPOTUNE_SYSFS_ROOT), /sys/class/net for interfaces,
 * and this process's environment for the launch variables.
 */
#include "doctor/doctor.h"
#include "doctor/internal.h"
#include "util/buf.h"
#include "util/env.h"
#include "util/file.h"
#include "util/json.h"
#include "util/mem.h"
#include "util/text.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

void doctor_add(json_t *checks, const char *name, const char *status, const char *fix,
                const char *fmt, ...)
{
    char evidence[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(evidence, sizeof(evidence), fmt, ap);
    va_end(ap);
    /* what the evidence quotes (a variable's value, an interface's name) is any bytes, and the
     * cut above may split a character: JSON takes UTF-8 only, and a row json_pack refused was
     * dropped, its failure with it (exit 0) */
    struct util_buf shown = UTIL_BUF_INIT, fixed = UTIL_BUF_INIT;
    util_text_shown(&shown, evidence);
    json_t *row = json_pack("{s:s,s:s,s:s,s:s?}", "name", name, "status", status, "evidence",
                            util_buf_str(&shown), "fix", fix ? util_text_shown(&fixed, fix) : NULL);
    json_array_append_new(checks, row ? row
                                      : json_pack("{s:s,s:s,s:s}", "name", name, "status", status,
                                                  "evidence", "(unprintable)"));
    util_buf_release(&shown);
    util_buf_release(&fixed);
}

/* 1. /dev/shm against the SHM transport's needs: a send and receive side of ~9 MiB per local peer.
 */
/* What is free of this machine's /dev/shm now, in bytes (-1: unknown): a size holds segments
 * that crashed jobs left behind. */
static long long shm_free(void)
{
    struct util_buf path = UTIL_BUF_INIT;
    struct statvfs vfs;
    util_buf_addf(&path, "%s/dev/shm", util_sysfs_root());
    long long free_bytes =
        statvfs(path.data, &vfs) == 0 ? (long long)vfs.f_bavail * (long long)vfs.f_frsize : -1;
    util_buf_release(&path);
    return free_bytes;
}

static void check_shm(json_t *c, const struct topo *t)
{
    long long free_now = shm_free(); /* read once: a verdict of one reading */
    long long need = (long long)t->ngpus * 2 * 9 * (1 << 20);
    const char *fix =
        "give the container more /dev/shm: docker run --shm-size=16g (or --ipc=host); on "
        "Kubernetes mount an emptyDir with medium: Memory at /dev/shm";
    if (t->system.shm_bytes < 0)
        doctor_add(c, "shm", "unknown", fix, "the size of /dev/shm could not be read");
    else if (t->ngpus < 2)
        doctor_add(c, "shm", "pass", NULL,
                   "/dev/shm has %lld MB; with %d GPU(s) NCCL's SHM transport is not needed",
                   t->system.shm_bytes >> 20, t->ngpus);
    else if (t->system.shm_bytes < need)
        doctor_add(c, "shm", "fail", fix,
                   "/dev/shm has %lld MB; NCCL's SHM transport needs about %lld MB for %d GPUs",
                   t->system.shm_bytes >> 20, need >> 20, t->ngpus);
    else if (free_now >= 0 && free_now < need) /* its size is not what is left of it */
        doctor_add(c, "shm", "fail",
                   "remove what crashed jobs left in /dev/shm (nccl-*, torch_* and other "
                   "segments no running process holds), or give the container more",
                   "/dev/shm has %lld MB but only %lld MB free; NCCL's SHM transport needs about "
                   "%lld MB for %d GPUs (ncclShmOpen fails with no space left)",
                   t->system.shm_bytes >> 20, free_now >> 20, need >> 20, t->ngpus);
    else /* what is free in MB, -1 where statvfs could not say */
        doctor_add(c, "shm", "pass", NULL,
                   "/dev/shm has %lld MB (%lld free); NCCL's SHM transport needs about %lld MB "
                   "for %d GPUs",
                   t->system.shm_bytes >> 20, free_now >= 0 ? free_now / (1 << 20) : -1, need >> 20,
                   t->ngpus);
}

static int rdma_nics(const struct topo *t)
{
    int n = 0;
    for (int i = 0; i < t->nnics; i++)
        n += topo_nic_rdma(t->nics[i].kind);
    return n;
}

/* Below this a locked-memory limit fails: the limits that break NCCL's registrations in the field
 * are the defaults (64 KiB, 8 MiB); sites that set a finite limit set one of gigabytes. */
#define MEMLOCK_LOW_BYTES (64LL << 20)

/* Whether Slurm started this process (a Prolog or HealthCheckProgram: slurmd or slurmstepd up
 * its line of parents, or a job's variables): its jobs run as their users. */
static int under_slurm(void)
{
    if (getenv("SLURM_JOB_ID") || getenv("SLURMD_NODENAME"))
        return 1;
    struct util_buf b = UTIL_BUF_INIT;
    long pid = (long)getppid();
    int found = 0;
    for (int up = 0; up < 16 && pid >= 1 && !found; up++) { /* PID 1 too: slurmd as a container's */
        char path[64];
        snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
        const char *s = util_sysfs_read(path, &b) ? NULL : util_buf_str(&b);
        const char *open = s ? strchr(s, '(') : NULL, *close = s ? strrchr(s, ')') : NULL;
        if (!open || !close || close < open)
            break;
        found = (close - open - 1 == 6 && !strncmp(open + 1, "slurmd", 6)) ||
                (close - open - 1 == 10 && !strncmp(open + 1, "slurmstepd", 10));
        pid = pid == 1 ? 0 : strtol(close + 3, NULL, 10); /* ") S PPID": the parent */
    }
    util_buf_release(&b);
    return found;
}

/*
 * Whether the limit binds the job: CAP_IPC_LOCK lifts it for what a process pins, and the job
 * holds it too where it was handed to a process not root (ambient capabilities), or to a
 * container's root (Kubernetes' capabilities: add: IPC_LOCK, a privileged container). Not to
 * root on a host, nor under Slurm (slurmd in a container too): a Prolog runs as root, its jobs
 * as their users, with slurmd's limit.
 */
static int memlock_lifted(const struct topo *t)
{
    return t->system.ipc_lock == 1 &&
           (geteuid() != 0 || (t->system.container == 1 && !under_slurm()));
}

/* 2. Locked memory where RDMA registers buffers. */
static void check_memlock(json_t *c, const struct topo *t)
{
    const char *fix =
        "raise the locked-memory limit: ulimit -l unlimited (limits.conf), docker run --ulimit "
        "memlock=-1, or Slurm's PropagateResourceLimits";
    long long m = t->system.memlock_bytes;
    if (!rdma_nics(t))
        doctor_add(c, "memlock", "pass", NULL,
                   "no RDMA NIC on this node: the limit does not matter");
    else if (m >= 0 && memlock_lifted(t))
        doctor_add(c, "memlock", "pass", NULL,
                   "memlock is %lld KB, but this process holds CAP_IPC_LOCK, which lifts it for "
                   "memory registration (a process of this job without it is held to it)",
                   m >> 10);
    else if (m == TOPO_MEMLOCK_UNKNOWN)
        doctor_add(c, "memlock", "unknown", fix,
                   "%d RDMA NIC(s), but the memlock limit could not be read", rdma_nics(t));
    else if (m == -1)
        doctor_add(c, "memlock", "pass", NULL, "memlock unlimited with %d RDMA NIC(s)",
                   rdma_nics(t));
    else if (m < MEMLOCK_LOW_BYTES)
        doctor_add(c, "memlock", "fail", fix,
                   "memlock is %lld KB with %d RDMA NIC(s): memory registration fails or hangs",
                   m >> 10, rdma_nics(t));
    else /* a site's own limit: NCCL's buffers per channel and peer may outgrow it in a big job */
        doctor_add(c, "memlock", "warn", fix,
                   "memlock is %lld MB, finite, with %d RDMA NIC(s): NCCL registers buffers per "
                   "channel and peer (in host memory without GPUDirect RDMA), which a large job "
                   "may need more of; NCCL and the NIC vendors ask for unlimited",
                   m >> 20, rdma_nics(t));
}

/* Whether NCCL keeps P2P off PCIe for name=value, as its ncclGetLevel reads them (paths.cc):
 * NCCL_P2P_DISABLE when strtol(value, 0) is 1 ("1", "01", "0x1"); NCCL_P2P_LEVEL at a level
 * below PIX, by its name (case as NCCL compares it: LOC, NVL, NVB, C2C) or the old number 0
 * (LOC; 1 is PIX). */
static int p2p_off(const char *name, const char *value)
{
    if (!value || !*value)
        return 0;
    if (!strcmp(name, "NCCL_P2P_DISABLE"))
        return strtol(value, NULL, 0) == 1;
    if (!strcmp(name, "NCCL_P2P_LEVEL"))
        return !strcmp(value, "LOC") || !strcmp(value, "NVL") || !strcmp(value, "NVB") ||
               !strcmp(value, "C2C") ||
               (isdigit((unsigned char)value[0]) && strtol(value, NULL, 0) == 0);
    return 0;
}

const char *doctor_p2p_disabled_by(const json_t *profile)
{
    static char said[320]; /* doctor runs its checks on one thread */
    /* as NCCL here reads them: the environment, then its configuration files (a site's
     * /etc/nccl.conf with NCCL_P2P_DISABLE=1 had the copies run, and fail the node) */
    const char *off_from = NULL, *level_from = NULL;
    const char *off = util_env_nccl("NCCL_P2P_DISABLE", &off_from);
    const char *level = util_env_nccl("NCCL_P2P_LEVEL", &level_from);
    if (p2p_off("NCCL_P2P_DISABLE", off))
        return snprintf(said, sizeof(said), "NCCL_P2P_DISABLE=1 (%.240s)",
                        off_from ? off_from : "this environment"),
               said;
    if (p2p_off("NCCL_P2P_LEVEL", level)) /* a value p2p_off took: no byte to clean */
        return snprintf(said, sizeof(said), "NCCL_P2P_LEVEL=%.16s (%.240s)", level,
                        level_from ? level_from : "this environment"),
               said;
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(profile, "variables"), i, v) {
        const char *name = util_json_str(v, "name", ""), *value = util_json_str(v, "value", "");
        if (p2p_off(name, value))
            return snprintf(said, sizeof(said), "%s=%.16s (the profile)", name,
                            strcmp(name, "NCCL_P2P_LEVEL") ? "1" : value),
                   said;
    }
    return NULL;
}

/* 3. P2P per GPU pair, as NVML and the CUDA driver report it: a hazard unless NCCL is kept off
 * it (NCCL_P2P_DISABLE=1, the fix this check gives). */
static void check_p2p(json_t *c, const struct topo *t, const json_t *profile)
{
    const char *fix =
        "set NCCL_P2P_DISABLE=1, or make P2P work (disable PCIe ACS on bare metal, check the "
        "IOMMU setting, use a driver that supports P2P on these GPUs)";
    const char *off = doctor_p2p_disabled_by(profile);
    if (t->ngpus < 2) {
        doctor_add(c, "p2p", t->ngpus ? "pass" : "unknown", NULL, "%s",
                   t->ngpus ? "one GPU: no peer to reach"
                            : "no GPU visible: P2P cannot be checked here");
        return;
    }
    if (t->p2p_broken == 1 && off) {
        doctor_add(c, "p2p", "pass", NULL,
                   "these GPUs' PCIe P2P is known to hang (topology fact); %s keeps NCCL off it",
                   off);
        return;
    }
    if (!t->p2p || t->p2p_broken == 1) {
        doctor_add(c, "p2p", t->p2p_broken == 1 ? "fail" : "unknown",
                   t->p2p_broken == 1 ? fix : NULL, "%s",
                   t->p2p_broken == 1
                       ? "these GPUs' PCIe P2P is known to hang (topology fact)"
                       : "neither NVML nor the CUDA driver answered: P2P status unknown");
        return;
    }
    int bad = 0;
    struct util_buf pairs = UTIL_BUF_INIT;
    for (int i = 0; i < t->ngpus; i++)
        for (int j = 0; j < t->ngpus; j++) {
            const char *s = t->p2p[i * t->ngpus + j];
            if (i != j && s && strcmp(s, "OK")) {
                bad++;
                if (bad <= 4)
                    util_buf_addf(&pairs, " GPU%d-GPU%d %s", i, j, s);
            }
        }
    doctor_add(c, "p2p", bad && !off ? "fail" : "pass", bad && !off ? fix : NULL,
               "%s reports %d pair(s) without P2P%s%s%s%s", t->p2p_source, bad,
               util_buf_str(&pairs), bad && off ? "; " : "", bad && off ? off : "",
               bad && off ? " keeps NCCL off them" : "");
    util_buf_release(&pairs);
}

/* 4. ACS redirecting peer traffic through the root complex, and the IOMMU mode. */
static void check_acs(json_t *c, const struct topo *t)
{
    const char *fix =
        "disable ACS on the PCIe switches above the GPUs (BIOS or setpci) on bare metal, or set "
        "NCCL_P2P_DISABLE=1; in VMs keep ACS and enable ATS on the NICs";
    json_t *acs = t->system.acs_bridges;
    int redirect = 0, unreadable = 0;
    size_t i;
    json_t *b;
    json_array_foreach(acs, i, b) {
        redirect += json_is_true(json_object_get(b, "redirect"));
        unreadable += json_is_null(json_object_get(b, "control"));
    }
    const char *iommu = t->system.iommu ? t->system.iommu : "unknown";
    if (t->ngpus < 2)
        doctor_add(c, "acs-iommu", "pass", NULL,
                   "fewer than two GPUs: no peer traffic for ACS to redirect; IOMMU: %s", iommu);
    else if (!acs || !json_array_size(acs)) /* no GPU's PCIe path was found to read */
        doctor_add(c, "acs-iommu", "unknown", NULL,
                   "ACS could not be read (no PCIe path to these GPUs here); IOMMU: %s", iommu);
    else if (redirect)
        doctor_add(c, "acs-iommu", "fail", fix,
                   "%d bridge(s) above GPUs redirect P2P requests (ACS RR/CR); IOMMU: %s", redirect,
                   iommu);
    else if (unreadable)
        doctor_add(
            c, "acs-iommu", "unknown", "run topotune doctor as root to read PCIe config space",
            "%d bridge(s) above GPUs could not be read (not root?); IOMMU: %s", unreadable, iommu);
    else
        doctor_add(c, "acs-iommu", "pass", NULL,
                   "no ACS redirect on %zu bridge(s) above GPUs; IOMMU: %s", json_array_size(acs),
                   iommu);
}

/* One device's link against what it can train to; 1 when it is degraded (said in bad). A GPU's
 * rate is not judged: at rest it trains down to 2.5 GT/s to save power, as it should. A GPU
 * (judge_rate 0) is an NVIDIA display or 3D controller, a NIC a network one: with --input the
 * address is the file's, and this host may hold another device there, not judged. */
static int link_degraded(const char *what, const char *pci, int judge_rate, struct util_buf *bad,
                         int *read)
{
    struct topo_pci_link l;
    if (topo_pci_link_read(pci, &l) || (!l.width_now && !l.gts_now))
        return 0;
    int base = l.class_code >> 16, nic = base == 0x02 || (l.class_code >> 8) == 0x0c06; /* or IB */
    if (judge_rate ? !nic : base != 0x03 || l.vendor != 0x10de)
        return 0;
    ++*read;
    int narrow = l.width_now > 0 && l.width_max > l.width_now;
    int slow = judge_rate && l.gts_now > 0 && l.gts_max > l.gts_now + 0.01;
    if (!narrow && !slow)
        return 0;
    util_buf_addf(bad, "%s%s (%s) at ", bad->len ? "; " : "", what, pci);
    if (slow)
        util_buf_addf(bad, "%g GT/s of %g", l.gts_now, l.gts_max);
    if (narrow)
        util_buf_addf(bad, "%sx%d of x%d", slow ? ", " : "", l.width_now, l.width_max);
    return 1;
}

/* 4b. PCIe links trained below what both ends can: a card or riser badly seated, a damaged slot
 * (the node that is slower than its class with nothing else to show for it). */
static void check_pcie_links(json_t *c, const struct topo *t)
{
    struct util_buf bad = UTIL_BUF_INIT;
    int read = 0, degraded = 0;
    char what[96];
    for (int i = 0; i < t->ngpus; i++) {
        snprintf(what, sizeof(what), "GPU%d", i);
        degraded += link_degraded(what, t->gpus[i].pci, 0, &bad, &read);
    }
    for (int i = 0; i < t->nnics; i++) {
        /* two ports of one function, or two functions of one device ("0000:05:00.0" and ".1"),
         * share one link: judged once */
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = topo_nic_rdma(t->nics[j].kind) && t->nics[i].pci[0] &&
                   !strncmp(t->nics[j].pci, t->nics[i].pci, strcspn(t->nics[i].pci, "."));
        if (topo_nic_rdma(t->nics[i].kind) && !seen)
            degraded += link_degraded(t->nics[i].name ? t->nics[i].name : "NIC", t->nics[i].pci, 1,
                                      &bad, &read);
    }
    if (degraded)
        doctor_add(c, "pcie-links", "fail",
                   "reseat the card or its riser and check the slot (lspci -vv: LnkSta against "
                   "LnkCap) and the BIOS's PCIe settings",
                   "%d PCIe link(s) trained below what both ends can: %s", degraded,
                   util_buf_str(&bad));
    else if (read)
        doctor_add(c, "pcie-links", "pass", NULL,
                   "%d PCIe link(s) of GPUs and RDMA NICs at the width (and the NICs' at the rate) "
                   "both ends can; a GPU's rate at rest is not judged",
                   read);
    else
        doctor_add(c, "pcie-links", "unknown", NULL,
                   "no PCIe link of a GPU or an RDMA NIC could be read here");
    util_buf_release(&bad);
}

/* A GPU NVML cannot reach, said into out; 0 for none, or for an error that says nothing of the
 * GPU (3: the call not supported; 4: another job's GPU, behind the cgroup). */
static int gpu_unreachable(int nvml_error, char *out, size_t len)
{
    switch (nvml_error) {
    case 0:
    case 3:
    case TOPO_NVML_NO_PERMISSION:
        return 0;
    case TOPO_NVML_GPU_IS_LOST:
        snprintf(out, len, "lost: fallen off the bus (Xid 79?)");
        break;
    case TOPO_NVML_RESET_REQUIRED:
        snprintf(out, len, "the driver asks for a GPU reset");
        break;
    case TOPO_NVML_CORRUPTED_INFOROM:
        snprintf(out, len, "its InfoROM is corrupted");
        break;
    default: /* 999 after an Xid 79, 8 not enough power, 11 an interrupt problem... */
        snprintf(out, len, "NVML cannot reach it (error %d)", nvml_error);
    }
    return 1;
}

/* One GPU's faults into bad (GPU index and address first); how severe: 2 fail, 1 warn, 0 none. */
static int gpu_faults(int i, const struct topo_gpu_health *h, struct util_buf *bad)
{
    struct util_buf f = UTIL_BUF_INIT;
    int worst = 0;
    long long s = h->slowdown;
    char gone[64];
    if (gpu_unreachable(h->nvml_error, gone, sizeof(gone)))
        util_buf_adds(&f, gone);
    if (h->remap_failed == 1)
        util_buf_addf(&f, "%sa row remapping failed (the GPU needs repair)", f.len ? ", " : "");
    if (h->remap_pending == 1)
        util_buf_addf(&f, "%srows remapped, pending a GPU reset", f.len ? ", " : "");
    if (h->ecc_uncorrected > 0)
        util_buf_addf(&f, "%s%lld uncorrectable ECC error(s) since the driver loaded",
                      f.len ? ", " : "", h->ecc_uncorrected);
    if (s > 0 && (s & (TOPO_SLOWDOWN_HW | TOPO_SLOWDOWN_HW_THERMAL | TOPO_SLOWDOWN_HW_POWER)))
        util_buf_addf(&f, "%shardware slowdown (%s)", f.len ? ", " : "",
                      s & TOPO_SLOWDOWN_HW_THERMAL ? "too hot"
                      : s & TOPO_SLOWDOWN_HW_POWER ? "power brake"
                                                   : "clocks halved or worse");
    worst = f.len ? 2 : 0;
    if (s > 0 && (s & TOPO_SLOWDOWN_SW_THERMAL)) {
        util_buf_addf(&f, "%sthe driver's thermal slowdown", f.len ? ", " : "");
        worst = worst ? worst : 1;
    }
    if (worst)
        util_buf_addf(bad, "%sGPU%d (%s): %s", bad->len ? "; " : "", i, h->pci[0] ? h->pci : "?",
                      util_buf_str(&f));
    util_buf_release(&f);
    return worst;
}

/* What NVML said of the GPUs, counted: of each kind, how many GPUs it read. */
struct health_read {
    int gpus, remap, ecc, events, denied;
};

static void health_count(const struct topo_gpu_health *h, struct health_read *r)
{
    r->denied += h->nvml_error == TOPO_NVML_NO_PERMISSION;
    r->remap += h->remap_pending >= 0;
    r->ecc += h->ecc_uncorrected >= 0;
    r->events += h->slowdown >= 0;
    r->gpus += h->remap_pending >= 0 || h->ecc_uncorrected >= 0 || h->slowdown >= 0;
}

/* gpu-health's pass (a warning where a GPU said nothing, not another job's): what was read,
 * said as such (a consumer GPU has no ECC nor row remapping). */
static void health_pass(json_t *c, int n, const struct health_read *r)
{
    struct util_buf t = UTIL_BUF_INIT;
    int unread = n - r->gpus - r->denied;
    util_buf_addf(&t, "%d of %d GPU(s) read:", r->gpus, n);
    if (r->remap)
        util_buf_addf(&t, " row remapping of %d, none pending or failed;", r->remap);
    if (r->ecc)
        util_buf_addf(&t, " uncorrectable ECC errors of %d, none;", r->ecc);
    if (r->events)
        util_buf_addf(&t, " clock events of %d, no slowdown;", r->events);
    if (unread > 0)
        util_buf_addf(&t, " %d said nothing;", unread);
    if (r->denied)
        util_buf_addf(&t, " %d another job's;", r->denied);
    t.data[--t.len] = '\0'; /* the last ';' */
    doctor_add(c, "gpu-health", unread > 0 ? "warn" : "pass",
               unread > 0 ? "see nvidia-smi -q and the kernel log" : NULL, "%s", util_buf_str(&t));
    util_buf_release(&t);
}

/* 4c. The GPUs' own health, as NVML says it: a GPU lost, or one that needs a reset (rows
 * remapped, pending) or a repair (a remapping failed, uncorrectable ECC errors) fails a job that
 * lands on it, or corrupts it; one slowed down by the hardware (too hot, a power brake) is the
 * node that drags the job. This machine's GPUs, whatever --input describes; not asked after a
 * copy test left asleep in the driver, where NVML's calls would wait with it. */
static void check_gpu_health(json_t *c, int copy_stuck)
{
    if (copy_stuck) {
        doctor_add(c, "gpu-health", "unknown", NULL,
                   "not asked: the copy test's process is still in the GPU driver, and NVML would "
                   "wait with it");
        return;
    }
    struct topo_gpu_health h[256]; /* GPUs of one machine: 8 today, 72 at most in sight */
    int n = topo_gpu_health(h, 256), worst = 0;
    struct health_read r = {0};
    struct util_buf bad = UTIL_BUF_INIT;
    for (int i = 0; i < n && i < 256; i++) {
        int w = gpu_faults(i, &h[i], &bad);
        worst = w > worst ? w : worst;
        health_count(&h[i], &r);
    }
    if (n < 0)
        doctor_add(c, "gpu-health", "unknown", NULL,
                   "NVML does not answer: no NVIDIA driver or GPU");
    else if (n == 0)
        doctor_add(c, "gpu-health", "unknown", NULL, "NVML lists no GPU");
    else if (worst)
        doctor_add(c, "gpu-health", worst == 2 ? "fail" : "warn",
                   "reset the GPU (nvidia-smi -r, or reboot) where rows wait for it or the driver "
                   "asks; a GPU lost or unreachable, a failed remapping or errors that stay: send "
                   "it for repair; a slowdown: the cooling or the power supply (nvidia-smi -q -d "
                   "PERFORMANCE)",
                   "%s", util_buf_str(&bad));
    else if (!r.gpus)
        doctor_add(c, "gpu-health", "unknown", NULL,
                   "NVML gives no row remapping, ECC count or clock events for these %d GPU(s)%s",
                   n,
                   r.denied ? " (another job's, behind the cgroup: not this job's to read)" : "");
    else
        health_pass(c, n, &r);
    util_buf_release(&bad);
}

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

struct iface {
    char name[256];
    long index;
    char addr[64]; /* its first address ("10.0.0.5/24"), "" when it has none */
    int v4;        /* it has an IPv4 address: getifaddrs lists those first, NCCL meets them so */
    int link;      /* its address is IPv6 link-local (fe80::), shown only without another */
};

static int by_index(const void *a, const void *b)
{
    long x = ((const struct iface *)a)->index, y = ((const struct iface *)b)->index;
    return x < y ? -1 : x > y;
}

/*
 * NCCL only uses interfaces that have an address. A captured sysfs tree has no
 * addresses to go with it: there every interface counts as addressed ("?").
 */
static void add_addresses(struct iface *ifs, int n)
{
    struct ifaddrs *all = NULL;
    int real = !*util_sysfs_root() && getifaddrs(&all) == 0;
    for (int i = 0; i < n; i++) {
        snprintf(ifs[i].addr, sizeof(ifs[i].addr), "%s", real ? "" : "?");
        ifs[i].v4 = !real;
        for (struct ifaddrs *a = all; a && !ifs[i].v4; a = a->ifa_next) {
            if (!a->ifa_addr || strcmp(a->ifa_name, ifs[i].name) ||
                (a->ifa_addr->sa_family != AF_INET && a->ifa_addr->sa_family != AF_INET6))
                continue;
            char host[INET6_ADDRSTRLEN] = "";
            const void *sa =
                a->ifa_addr->sa_family == AF_INET
                    ? (const void *)&((struct sockaddr_in *)(void *)a->ifa_addr)->sin_addr
                    : (const void *)&((struct sockaddr_in6 *)(void *)a->ifa_addr)->sin6_addr;
            inet_ntop(a->ifa_addr->sa_family, sa, host, sizeof(host));
            /* NCCL's interface search (src/os/linux.cc) skips IPv6 loopback only: an IPoIB
             * interface with a link-local address alone is NCCL's bootstrap interface */
            int v6 = a->ifa_addr->sa_family == AF_INET6, link = v6 && starts(host, "fe80");
            if (v6 && (!strcmp(host, "::1") || (ifs[i].addr[0] && !(ifs[i].link && !link))))
                continue;
            ifs[i].v4 = !v6;
            ifs[i].link = link;
            snprintf(ifs[i].addr, sizeof(ifs[i].addr), "%s", host);
        }
    }
    if (all)
        freeifaddrs(all);
}

/* The interface of the default route, from /proc/net/route, or "" when there is none. */
static void default_route(char *out, size_t len)
{
    struct util_buf b = UTIL_BUF_INIT;
    out[0] = '\0';
    if (util_sysfs_read("/proc/net/route", &b) == 0)
        for (char *line = b.data; line && *line; line = strchr(line, '\n'), line += !!line) {
            char name[64];
            unsigned long dest;
            if (sscanf(line, "%63s %lx", name, &dest) == 2 && dest == 0) {
                snprintf(out, len, "%s", name);
                break;
            }
        }
    util_buf_release(&b);
}

/* Interfaces that are up ("unknown" counts: lo, dummies and some drivers never say up), lo too,
 * in ifindex order, every one of them (a Kubernetes host has hundreds of veths: the first 64 of
 * the directory's hash order left its eth0 out). A new array (free it), *n its length. */
static struct iface *up_interfaces(int *n)
{
    struct util_buf dir = UTIL_BUF_INIT, val = UTIL_BUF_INIT, path = UTIL_BUF_INIT;
    util_buf_addf(&dir, "%s/sys/class/net", util_sysfs_root());
    DIR *d = opendir(dir.data);
    int cap = 16;
    struct iface *out = util_xmalloc(sizeof(*out) * (size_t)cap);
    *n = 0;
    for (struct dirent *e; d && (e = readdir(d)) && *n < 65536;) {
        if (e->d_name[0] == '.')
            continue;
        util_buf_reset(&path);
        util_buf_addf(&path, "/sys/class/net/%s/operstate", e->d_name);
        if (util_sysfs_read_line(path.data, &val) ||
            (strcmp(util_buf_str(&val), "up") && strcmp(util_buf_str(&val), "unknown")))
            continue;
        if (*n == cap)
            out = util_xrealloc(out, sizeof(*out) * (size_t)(cap *= 2));
        struct iface *x = &out[(*n)++];
        memset(x, 0, sizeof(*x));
        snprintf(x->name, sizeof(x->name), "%s", e->d_name);
        util_buf_reset(&path);
        util_buf_addf(&path, "/sys/class/net/%s/ifindex", e->d_name);
        x->index = util_sysfs_read_line(path.data, &val) ? 1 << 30 : atol(util_buf_str(&val));
    }
    if (d)
        closedir(d);
    util_buf_release(&dir);
    util_buf_release(&val);
    util_buf_release(&path);
    qsort(out, (size_t)*n, sizeof(*out), by_index);
    add_addresses(out, *n);
    return out;
}

/* NCCL_SOCKET_IFNAME's syntax: "^a,b" none of them, "=a,b" exactly those, "a,b" by prefix;
 * each entry a name, then ":port" and more that sockets ignore (NCCL's parseStringList: "eth0:1"
 * takes eth0), an empty name none. */
static int ifname_takes(const char *spec, const char *name)
{
    int exclude = spec[0] == '^', exact = spec[exclude] == '=', hit = 0, entries = 0;
    for (const char *p = spec + exclude + exact; *p && !hit; p += strcspn(p, ","), p += *p == ',') {
        size_t len = strcspn(p, ",:");
        entries += len > 0;
        hit = len && !strncmp(name, p, len) && (!exact || !name[len]);
    }
    if (!entries) /* NCCL's matchIfList: an empty list matches every name ("^," takes none) */
        hit = 1;
    return exclude ? !hit : hit;
}

/* The first interface of ifs NCCL's ncclOsFindInterfaces takes for the list spec: addressed, in
 * getifaddrs' order (every IPv4 address first, then IPv6); NULL when none. */
static const char *find_first(const struct iface *ifs, int n, const char *spec)
{
    for (int v4 = 1; v4 >= 0; v4--)
        for (int i = 0; i < n; i++)
            if (ifs[i].addr[0] && ifs[i].v4 == v4 && ifname_takes(spec, ifs[i].name))
                return ifs[i].name;
    return NULL;
}

/* The interface NCCL bootstraps over (ncclFindInterfaces, src/misc/socket.cc): the value of
 * NCCL_SOCKET_IFNAME (spec; longer than one character, else unset) or it fails; unset, an ib
 * interface, else one that is no docker, lo or virbr, else docker, lo, virbr. NULL: none. */
static const char *nccl_pick(const struct iface *ifs, int n, const char *spec)
{
    if (spec && strlen(spec) > 1)
        return find_first(ifs, n, spec);
    static const char *const order[] = {"ib", "^docker,lo,virbr", "docker", "lo", "virbr"};
    const char *pick = NULL;
    for (size_t k = 0; !pick && k < sizeof(order) / sizeof(order[0]); k++)
        pick = find_first(ifs, n, order[k]);
    return pick;
}

/* The data network's interface to name in a fix: an ib interface with an address, else the first
 * that is no container bridge, veth or lo. NULL: none. */
static const char *data_interface(const struct iface *ifs, int n)
{
    const char *good = find_first(ifs, n, "ib");
    for (int i = 0; !good && i < n; i++) /* a link-local address alone reaches one link only */
        if (ifs[i].addr[0] && !ifs[i].link && strcmp(ifs[i].name, "lo") &&
            !topo_iface_is_virtual(ifs[i].name))
            good = ifs[i].name;
    return good;
}

/* lo taken by a value that does not name it (an exclusion, "^docker"): NCCL then bootstraps over
 * lo, and a job across nodes cannot start. */
static int lo_by_accident(const char *spec, const char *pick)
{
    return pick && !strcmp(pick, "lo") && spec && strlen(spec) > 1 &&
           (spec[0] == '^' || !ifname_takes(spec, "lo"));
}

/*
 * 5. Interfaces: the one NCCL bootstraps over, as NCCL picks it (nccl_pick: NCCL_SOCKET_IFNAME's
 * value when set, where a value that takes none fails NCCL's init; else its default order), and
 * whether that is lo taken by an exclusion, or a container bridge or veth whose traffic may never
 * leave the host; which interface holds the default route (the routable one).
 */
#define SHOWN_INTERFACES 12 /* a Kubernetes host's hundreds of veths are counted, not listed */
static void check_interfaces(json_t *c)
{
    int n;
    struct iface *ifs = up_interfaces(&n);
    const char *env = util_env_nccl("NCCL_SOCKET_IFNAME", NULL); /* nccl.conf's too */
    int set = env && strlen(env) > 1;
    const char *pick = nccl_pick(ifs, n, set ? env : NULL), *good = data_interface(ifs, n);
    char route[64];
    default_route(route, sizeof(route));
    struct util_buf up = UTIL_BUF_INIT, fix = UTIL_BUF_INIT;
    int shown = 0;
    for (int i = 0; i < n; i++) {
        int addressed = ifs[i].addr[0] != '\0';
        if (!strcmp(ifs[i].name, "lo") || (shown >= SHOWN_INTERFACES && ifs[i].name != pick))
            continue;
        shown++;
        util_buf_addf(&up, "%s%s (%s)", up.len ? ", " : "", ifs[i].name,
                      !addressed                 ? "no address"
                      : strcmp(ifs[i].addr, "?") ? ifs[i].addr
                                                 : "address unknown");
    }
    int others = 0;
    for (int i = 0; i < n; i++)
        others += strcmp(ifs[i].name, "lo") != 0;
    if (others > shown)
        util_buf_addf(&up, " and %d more", others - shown);
    util_buf_addf(&fix, "export NCCL_SOCKET_IFNAME==%s",
                  good ? good : "<the data network's interface>");
    int lo = pick && !strcmp(pick, "lo") && (!set || lo_by_accident(env, pick));
    int virt = pick && topo_iface_is_virtual(pick);
    if (!others)
        doctor_add(c, "interfaces", "fail", "bring up a network interface for NCCL's bootstrap",
                   "no interface is up besides lo");
    else if (!pick && set)
        doctor_add(c, "interfaces", "fail", util_buf_str(&fix),
                   "up: %s; NCCL_SOCKET_IFNAME=%s takes none of them that has an address: NCCL's "
                   "bootstrap fails at init",
                   util_buf_str(&up), env);
    else if (!pick)
        doctor_add(c, "interfaces", "fail",
                   "give the data interface an IP address: NCCL's bootstrap needs one",
                   "up: %s; none has an address NCCL could use", util_buf_str(&up));
    else
        doctor_add(c, "interfaces", lo || virt ? "warn" : "pass",
                   lo || virt ? util_buf_str(&fix) : NULL,
                   "up: %s; NCCL would pick %s %s%s%s; default route: %s", util_buf_str(&up), pick,
                   set ? "by NCCL_SOCKET_IFNAME=" : "by default", set ? env : "",
                   lo     ? "; lo does not leave this host: a job across nodes cannot start"
                   : virt ? "; a container bridge or veth: its traffic may not leave this host"
                          : "",
                   route[0] ? route : "none");
    util_buf_release(&up);
    util_buf_release(&fix);
    free(ifs);
}

/* A rank variable: 0 when unset or empty, 1 with *v its value (a whole number from 0), -1 when it
 * is something else (torch and NCCL read "abc" as no rank at all, strtol read it as 0). */
static int env_rank(const char *name, long *v)
{
    const char *s = getenv(name);
    *v = -1;
    if (!s || !*s)
        return 0;
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (*end || errno || x < 0 || !isdigit((unsigned char)*s))
        return -1;
    *v = x;
    return 1;
}

/* What a launcher of ranks (srun, mpirun) says of this process: its rank and size, its rank and
 * the tasks on this node, its nodes (-1: not said). */
struct launcher {
    const char *name;
    long rank, size, local, local_size, nodes;
};

/* The rank variables of the launch, each read with env_rank; a bad one is named in problems. */
struct launch {
    long rank, world, local, lworld;
    struct launcher slurm, mpi;
    int torchrun; /* torchrun (torchelastic) started this process: its own variables say so */
};

#define PROBLEM(b, ...) util_buf_addf(b, __VA_ARGS__)

static void read_rank(const char *name, long *v, struct util_buf *problems)
{
    if (env_rank(name, v) < 0) {
        struct util_buf shown = UTIL_BUF_INIT;
        PROBLEM(problems, "%s='%s' is no rank number; ", name,
                util_text_shown(&shown, getenv(name)));
        util_buf_release(&shown);
    }
}

/* srun's numbers of this step: not the batch script's (which holds SLURM_PROCID 0 of the
 * allocation's tasks), nor those mpirun's ranks inherit from its daemons' step in an allocation. */
static void read_slurm(struct launcher *x, struct util_buf *p)
{
    *x = (struct launcher){"srun", -1, -1, -1, -1, -1};
    if ((!getenv("SLURM_STEP_ID") && !getenv("SLURM_STEPID")) || getenv("OMPI_COMM_WORLD_RANK"))
        return;
    read_rank("SLURM_PROCID", &x->rank, p);
    read_rank("SLURM_NTASKS", &x->size, p);
    read_rank("SLURM_LOCALID", &x->local, p);
    if (x->size < 0)
        read_rank("SLURM_STEP_NUM_TASKS", &x->size, p);
    read_rank("SLURM_STEP_NUM_NODES", &x->nodes, p);
    if (x->nodes < 0)
        read_rank("SLURM_NNODES", &x->nodes, p);
    if (x->size > 0 && x->nodes > 0 && x->size % x->nodes == 0)
        x->local_size = x->size / x->nodes;
}

static void read_mpi(struct launcher *x, struct util_buf *p)
{
    *x = (struct launcher){"mpirun", -1, -1, -1, -1, -1};
    read_rank("OMPI_COMM_WORLD_RANK", &x->rank, p);
    read_rank("OMPI_COMM_WORLD_SIZE", &x->size, p);
    read_rank("OMPI_COMM_WORLD_LOCAL_RANK", &x->local, p);
    read_rank("OMPI_COMM_WORLD_LOCAL_SIZE", &x->local_size, p);
}

static void read_launch(struct launch *l, struct util_buf *p)
{
    read_rank("RANK", &l->rank, p);
    read_rank("WORLD_SIZE", &l->world, p);
    read_rank("LOCAL_RANK", &l->local, p);
    read_rank("LOCAL_WORLD_SIZE", &l->lworld, p);
    /* torchrun's own marks (torchelastic): a launch wrapper exports LOCAL_WORLD_SIZE too */
    l->torchrun = getenv("TORCHELASTIC_RUN_ID") || getenv("GROUP_RANK") || getenv("ROLE_RANK");
    read_slurm(&l->slurm, p);
    read_mpi(&l->mpi, p);
}

/* A launcher's own numbers, and the ranks' against them: where torchrun runs one per node under
 * it (PyTorch's pattern, and topotune's sbatch.sh: srun --ntasks-per-node=1 torchrun), its
 * workers' RANK is not the launcher's; where the launcher starts every rank, they are its. */
static void against(const struct launch *l, const struct launcher *x, struct util_buf *p)
{
    if (x->rank < 0)
        return;
    if (x->size >= 0 && x->rank >= x->size)
        PROBLEM(p, "%s's rank %ld is not below its %ld tasks; ", x->name, x->rank, x->size);
    if (x->local >= 0 && x->local_size >= 0 && x->local >= x->local_size)
        PROBLEM(p, "%s's local rank %ld is not below its %ld tasks on this node; ", x->name,
                x->local, x->local_size);
    if (l->torchrun) {
        /* more than one torchrun per node, each with workers: twice the ranks the job expects */
        long per_node = x->local_size > 0 ? x->local_size : x->local > 0 ? x->local + 1 : -1;
        if (per_node > 1 && l->lworld > 1)
            PROBLEM(p,
                    "two launchers: %s starts %ld or more tasks on this node and each torchrun "
                    "%ld workers; ",
                    x->name, per_node, l->lworld);
        else if (l->world >= 0 && l->lworld > 0 && x->size > 0 && l->world != x->size * l->lworld)
            PROBLEM(p, "WORLD_SIZE %ld, but %s's %ld tasks x LOCAL_WORLD_SIZE %ld are %ld ranks; ",
                    l->world, x->name, x->size, l->lworld, x->size * l->lworld);
        return;
    }
    if (l->rank >= 0 && l->rank != x->rank)
        PROBLEM(p, "two launchers: RANK %ld but %s's rank %ld; ", l->rank, x->name, x->rank);
    if (l->world >= 0 && x->size >= 0 && l->world != x->size)
        PROBLEM(p, "WORLD_SIZE %ld but %s's %ld tasks; ", l->world, x->name, x->size);
    if (l->local >= 0 && x->local >= 0 && l->local != x->local)
        PROBLEM(p, "LOCAL_RANK %ld but %s's local rank %ld; ", l->local, x->name, x->local);
}

/* 6. The launch environment: ranks consistent, one launcher. */
static void check_launch(json_t *c, const struct topo *t)
{
    struct util_buf p = UTIL_BUF_INIT;
    struct launch l;
    read_launch(&l, &p);
    int torch = l.rank >= 0 || l.world >= 0 || l.local >= 0;
    if (!torch && !p.len && l.slurm.rank < 0 && l.mpi.rank < 0) {
        doctor_add(c, "launch", "pass", NULL,
                   "not started by a launcher (no RANK, WORLD_SIZE or LOCAL_RANK)");
        util_buf_release(&p);
        return;
    }
    int has_rank = getenv("RANK") && *getenv("RANK"),
        has_world = getenv("WORLD_SIZE") && *getenv("WORLD_SIZE");
    if (has_rank != has_world && torch)
        PROBLEM(&p, "%s without %s (torch.distributed's env:// reads both); ",
                has_rank ? "RANK" : "WORLD_SIZE", has_rank ? "WORLD_SIZE" : "RANK");
    if (l.rank >= 0 && l.world >= 0 && l.rank >= l.world)
        PROBLEM(&p, "RANK %ld is not below WORLD_SIZE %ld; ", l.rank, l.world);
    if (l.local >= 0 && l.lworld >= 0 && l.local >= l.lworld)
        PROBLEM(&p, "LOCAL_RANK %ld is not below LOCAL_WORLD_SIZE %ld; ", l.local, l.lworld);
    if (l.lworld > 0 && l.world > 0 && l.world % l.lworld)
        PROBLEM(&p, "WORLD_SIZE %ld is not a multiple of LOCAL_WORLD_SIZE %ld; ", l.world,
                l.lworld);
    int limited, visible = topo_visible_gpus(t, &limited);
    if ((t->ngpus > 0 || limited) && l.local >= visible) /* cuda:LOCAL_RANK: invalid ordinal */
        PROBLEM(&p, "LOCAL_RANK %ld but only %d GPU(s) visible%s; ", l.local, visible,
                limited ? " (CUDA_VISIBLE_DEVICES)" : "");
    /* more ranks on the node than its GPUs: two share one, which NCCL refuses ("Duplicate GPU
     * detected"), whatever this rank's own LOCAL_RANK; where CUDA_VISIBLE_DEVICES limits them,
     * each rank may have been given its own (srun --gpus-per-task=1): not judged */
    else if (t->ngpus > 0 && !limited && l.lworld > visible)
        PROBLEM(&p,
                "LOCAL_WORLD_SIZE %ld but only %d GPU(s) visible%s: two ranks would share "
                "a GPU, which NCCL refuses; ",
                l.lworld, visible, limited ? " (CUDA_VISIBLE_DEVICES)" : "");
    against(&l, &l.slurm, &p);
    against(&l, &l.mpi, &p);
    int master = l.rank >= 0 && (!getenv("MASTER_ADDR") || !getenv("MASTER_PORT"));
    if (master)
        PROBLEM(&p, "MASTER_ADDR or MASTER_PORT missing; ");
    const char *fix = !p.len ? NULL
                      : master && p.len == strlen("MASTER_ADDR or MASTER_PORT missing; ")
                          ? "export MASTER_ADDR (rank 0's host) and MASTER_PORT before starting "
                            "the ranks (torchrun sets them from --rdzv-endpoint)"
                          : "start ranks with one launcher, as the job's launch script does "
                            "(srun or mpirun starting every rank, or one torchrun per node), "
                            "with each variable a whole number";
    doctor_add(c, "launch", p.len ? "fail" : "pass", fix, "%s",
               p.len ? util_buf_str(&p) : "RANK, LOCAL_RANK and WORLD_SIZE are consistent");
    util_buf_release(&p);
}
#undef PROBLEM

/* 7. A profile: same class, same software, its variables set here. */
static void check_profile(json_t *c, const struct topo *t, const json_t *p)
{
    if (!p)
        return;
    const char *cls = json_string_value(json_object_get(p, "class"));
    if (!cls || !t->class_id || strcmp(cls, t->class_id)) {
        doctor_add(c, "profile", "fail",
                   "use the profile made for this node class, or sweep this class",
                   "the profile is for class %s, this node is %s", cls ? cls : "?",
                   t->class_id ? t->class_id : "?");
        return;
    }
    const json_t *sw = json_object_get(p, "software");
    const char *want = json_string_value(json_object_get(sw, "nccl"));
    if (want && t->software.nccl && strcmp(want, t->software.nccl)) {
        doctor_add(c, "profile", "fail",
                   "sweep again with this NCCL (topotune sweep, then gen): tuning variables are "
                   "only valid for the NCCL they were measured with",
                   "the profile was measured with NCCL %s, this node has %s", want,
                   t->software.nccl);
        return;
    }
    /* CUDA and the driver change less of NCCL's choices: a warning, with the versions. */
    struct util_buf drift = UTIL_BUF_INIT;
    const char *names[] = {"cuda", "driver"};
    const char *here[] = {t->software.cuda, t->software.driver};
    for (int i = 0; i < 2; i++) {
        const char *was = json_string_value(json_object_get(sw, names[i]));
        if (was && here[i] && strcmp(was, here[i]))
            util_buf_addf(&drift, "; %s %s when measured, %s here", names[i], was, here[i]);
    }
    struct util_buf missing = UTIL_BUF_INIT;
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(p, "variables"), i, v) {
        const char *name = json_string_value(json_object_get(v, "name"));
        const char *value = json_string_value(json_object_get(v, "value"));
        const char *have = name ? util_env_nccl(name, NULL) : NULL; /* nccl.conf's count */
        /* a device name is resolved for this node (env --node) and differs from the profile's by
         * design, set or not: node-values judges it (sourcing the profile's value, as advised
         * here, failed it there); a name no file may set (LD_PRELOAD) is in no nccl.env */
        if (name && (util_env_per_node(name) || util_env_refused(name)))
            continue;
        if (!have || strcmp(have, value))
            util_buf_addf(&missing, " %s=%s", name, value);
    }
    /* no NCCL found here (or one without ncclGetVersion): the versions were never compared */
    int unknown = want && !t->software.nccl;
    int warn = missing.len || drift.len || unknown;
    doctor_add(c, "profile", warn ? "warn" : "pass",
               missing.len ? "source the profile's nccl.env before launching"
               : unknown   ? "check that the job's NCCL is the one the profile was measured with"
               : drift.len ? "sweep again on this software to confirm the profile still wins"
                           : NULL,
               "class %s%s%s%s%s",
               unknown ? "matches; this node's NCCL version is unknown, the "
                         "profile's is "
                       : "and NCCL version match",
               unknown ? want : "", util_buf_str(&drift),
               missing.len ? "; not set in this environment:" : "", util_buf_str(&missing));
    util_buf_release(&drift);
    util_buf_release(&missing);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct iface *)a)->name, ((const struct iface *)b)->name);
}

char *doctor_up_interfaces(void)
{
    int n, k = 0;
    struct iface *ifs = up_interfaces(&n);
    /* what a node's traffic can leave by: its veths are named at random, lo and bridges alike */
    for (int i = 0; i < n; i++)
        if (ifs[i].addr[0] && !ifs[i].link && strcmp(ifs[i].name, "lo") &&
            !topo_iface_is_virtual(ifs[i].name))
            ifs[k++] = ifs[i];
    qsort(ifs, (size_t)k, sizeof(*ifs), by_name); /* nodes are compared by names, not order */
    struct util_buf b = UTIL_BUF_INIT;
    util_buf_adds(&b, "");
    for (int i = 0; i < k; i++)
        util_buf_addf(&b, "%s%s", i ? "," : "", ifs[i].name);
    free(ifs);
    return util_buf_detach(&b);
}

int doctor_nccl_interface(const char *spec, char *out, size_t len)
{
    int n;
    struct iface *ifs = up_interfaces(&n);
    const char *pick = nccl_pick(ifs, n, spec);
    snprintf(out, len, "%s", pick ? pick : "");
    free(ifs);
    return pick != NULL;
}

json_t *doctor_up_interface_names(void)
{
    int n;
    struct iface *ifs = up_interfaces(&n);
    json_t *names = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(names, json_string(ifs[i].name));
    free(ifs);
    return names;
}

int doctor_data_interface(const char *spec, char *out, size_t len)
{
    int n;
    struct iface *ifs = up_interfaces(&n);
    const char *pick = spec ? nccl_pick(ifs, n, spec) : data_interface(ifs, n);
    if (lo_by_accident(spec, pick))
        pick = NULL;
    snprintf(out, len, "%s", pick ? pick : "");
    free(ifs);
    return pick != NULL;
}

json_t *doctor_run(const struct topo *t, const json_t *profile, double copy_timeout_s)
{
    json_t *checks = json_array();
    check_shm(checks, t);
    check_memlock(checks, t);
    check_p2p(checks, t, profile);
    int copy_stuck =
        doctor_check_p2p_copy(checks, t, copy_timeout_s, doctor_p2p_disabled_by(profile));
    check_acs(checks, t);
    check_pcie_links(checks, t);
    check_gpu_health(checks, copy_stuck);
    check_interfaces(checks);
    doctor_check_rdma(checks, t);
    check_launch(checks, t);
    check_profile(checks, t, profile);
    if (profile)
        doctor_check_node_values(checks, profile);
    return checks;
}
