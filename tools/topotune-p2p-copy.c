/* SPDX-License-Identifier: MIT */
/*
 * topotune-p2p-copy: copies a known pattern from every GPU to every other GPU
 * that claims peer access, and verifies it. The classic consumer-GPU failure is
 * P2P that is advertised but hangs or corrupts, so `topotune doctor` runs this
 * in a child under a deadline and reads one line per step from stdout:
 *   pair I J start
 *   pair I J ok GBPS | pair I J wrong WORDS | pair I J skip REASON
 * Peer access is enabled both ways and checked both ways: a copy between GPUs
 * without it goes through host memory and would prove nothing about P2P.
 * Exit: 0 every copy verified, 7 a copy was wrong, 5 a peer operation failed,
 * 2 another CUDA error (not P2P's fault), 3 no GPU, 6 usage.
 */
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORDS (8u << 20) /* 32 MiB of 32-bit words per copy */

/* Enables access from device `from` to device `to`'s memory; already enabled is fine. *mine
 * is set when this call enabled it (and the pair's end disables it again). */
static cudaError_t enable_peer(int from, int to, int *mine)
{
    cudaError_t e = cudaSetDevice(from);
    if (e == cudaSuccess)
        e = cudaDeviceEnablePeerAccess(to, 0);
    *mine = e == cudaSuccess;
    if (e == cudaErrorPeerAccessAlreadyEnabled) {
        cudaGetLastError(); /* clear the sticky "already enabled" */
        e = cudaSuccess;
    }
    return e;
}

/* Undoes what enable_peer enabled: a device keeps at most 8 peer mappings on a system without
 * NVSwitch, and a ninth pair's enable failed (cudaErrorTooManyPeers) as if P2P were broken. */
static void disable_peer(int from, int to, int mine)
{
    if (mine && cudaSetDevice(from) == cudaSuccess)
        cudaDeviceDisablePeerAccess(to);
}

static int cuda_failed(cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return 0;
    fprintf(stderr, "topotune-p2p-copy: %s: %s\n", what, cudaGetErrorString(e));
    return 1;
}

static uint32_t pattern(uint32_t i, int src)
{
    return (i * 2654435761u) ^ (uint32_t)(src + 1) * 0x9e3779b9u;
}

/* Copies src's pattern to dst through peer access; 0 ok, 7 wrong, 5 peer failure, 2 CUDA error. */
static int copy_pair(int src, int dst, uint32_t *host)
{
    void *a = NULL, *b = NULL;
    cudaStream_t s = NULL;
    cudaEvent_t t0 = NULL, t1 = NULL;
    int rc = 2, ab = 0, ba = 0;
    size_t bytes = (size_t)WORDS * sizeof(uint32_t);
    for (uint32_t i = 0; i < WORDS; i++)
        host[i] = pattern(i, src);
    printf("pair %d %d start\n", src, dst);
    fflush(stdout);
    if (cuda_failed(cudaSetDevice(dst), "cudaSetDevice") ||
        cuda_failed(cudaMalloc(&b, bytes), "cudaMalloc") ||
        cuda_failed(cudaSetDevice(src), "cudaSetDevice") ||
        cuda_failed(cudaMalloc(&a, bytes), "cudaMalloc") ||
        cuda_failed(cudaStreamCreate(&s), "cudaStreamCreate") ||
        cuda_failed(cudaEventCreate(&t0), "cudaEventCreate") ||
        cuda_failed(cudaEventCreate(&t1), "cudaEventCreate") ||
        cuda_failed(cudaMemcpy(a, host, bytes, cudaMemcpyHostToDevice), "copy to GPU"))
        goto out;
    rc = 5; /* from here on, a failure is the peer path's */
    if (cuda_failed(enable_peer(src, dst, &ab), "enable peer access") ||
        cuda_failed(enable_peer(dst, src, &ba), "enable peer access") ||
        cuda_failed(cudaSetDevice(src), "cudaSetDevice") ||
        cuda_failed(cudaEventRecord(t0, s), "cudaEventRecord") ||
        cuda_failed(cudaMemcpyPeerAsync(b, dst, a, src, bytes, s), "peer copy") ||
        cuda_failed(cudaEventRecord(t1, s), "cudaEventRecord") ||
        cuda_failed(cudaStreamSynchronize(s), "peer copy"))
        goto out;
    rc = 2;
    memset(host, 0, bytes);
    if (cuda_failed(cudaMemcpy(host, b, bytes, cudaMemcpyDeviceToHost), "copy from GPU"))
        goto out;
    uint32_t wrong = 0;
    for (uint32_t i = 0; i < WORDS; i++)
        wrong += host[i] != pattern(i, src);
    float ms = 0;
    cudaEventElapsedTime(&ms, t0, t1);
    if (wrong)
        printf("pair %d %d wrong %u\n", src, dst, wrong);
    else
        printf("pair %d %d ok %.1f\n", src, dst, ms > 0 ? bytes / (ms * 1e6) : 0.0);
    rc = wrong ? 7 : 0;
out:
    fflush(stdout);
    disable_peer(src, dst, ab);
    disable_peer(dst, src, ba);
    if (t0)
        cudaEventDestroy(t0);
    if (t1)
        cudaEventDestroy(t1);
    if (s)
        cudaStreamDestroy(s);
    cudaFree(a);
    cudaSetDevice(dst);
    cudaFree(b);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        fprintf(stderr, "usage: %s (no arguments; run by topotune doctor)\n", argv[0]);
        return strcmp(argv[1], "--help") ? 6 : 0;
    }
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        fprintf(stderr, "topotune-p2p-copy: no GPU visible: %s\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return 3;
    }
    uint32_t *host = malloc((size_t)WORDS * sizeof(uint32_t));
    if (!host)
        return 2;
    int worst = 0;
    for (int src = 0; src < n; src++)
        for (int dst = 0; dst < n; dst++) {
            int there = 0, back = 0;
            if (src == dst)
                continue;
            if (cuda_failed(cudaDeviceCanAccessPeer(&there, src, dst), "cudaDeviceCanAccessPeer") ||
                cuda_failed(cudaDeviceCanAccessPeer(&back, dst, src), "cudaDeviceCanAccessPeer")) {
                free(host);
                return 2;
            }
            if (!there || !back) {
                printf("pair %d %d skip no-peer-access\n", src, dst);
                continue;
            }
            int rc = copy_pair(src, dst, host);
            if (rc == 2 || rc == 5) {
                free(host);
                return rc;
            }
            worst = rc > worst ? rc : worst;
        }
    free(host);
    return worst;
}
