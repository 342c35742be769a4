/* SPDX-License-Identifier: MIT */
/*
 * launch/pytorchjob.yaml (Kubeflow: memory-backed /dev/shm, IPC_LOCK, the
 * profile's variables), launch/Dockerfile.fragment (the profile in the image,
 * NCCL_CONF_FILE pointing at it), and for operators launch/check-daemonset.yaml
 * (topotune check on every node of the class) and launch/survey-job.yaml (a
 * survey of a host list). Values were validated against a character set, and are
 * written as YAML double-quoted scalars all the same.
 */
#include "gen/internal.h"
#include "ops/ops.h"
#include "util/env.h"
#include "util/json.h"
#include "util/quote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where the Dockerfile fragment puts topotune's tuner plugin in the image. */
#define IMAGE_PLUGIN "/opt/topotune/lib/libnccl-tuner-topotune.so"

/* A per-node variable's value (NCCL_IB_HCA's device names) was measured on one node: an image or
 * a pod spec that every node shares must not pin it. Its line says where each node's comes from. */
static int per_node_note(struct util_buf *out, const char *indent, const char *name)
{
    if (!util_env_per_node(name))
        return 0;
    util_buf_addf(out,
                  "%s# %s: per node (its measured value is one node's): not set here, so NCCL "
                  "picks its own on\n"
                  "%s# each node; to set each node's, start the command through 'topotune env "
                  "--node --profile\n"
                  "%s# /opt/topotune/profile --' (an image with topotune), as the launch scripts "
                  "do\n",
                  indent, name, indent, indent);
    return 1;
}

static int yaml_env(const char *name, const char *value, const char *role, void *ctx)
{
    if (per_node_note(ctx, "                ", name))
        return 0;
    util_buf_addf(ctx, "                - name: %s  # %s\n                  value: ", name, role);
    util_quote_yaml(ctx, value);
    util_buf_adds(ctx, "\n");
    return 0;
}

/* 1 when the profile's variables set name: its value is the one to write, once (Kubernetes
 * refuses a container's env that names a variable twice under server-side apply). */
static int profile_sets(const json_t *profile, const char *name)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(profile, "variables"), i, v)
        if (!strcmp(json_string_value(json_object_get(v, "name")) ?: "", name))
            return 1;
    return 0;
}

/* PyTorch's settings for a job that must not hang, where the profile sets none of its own. */
static void torch_env(const json_t *profile, struct util_buf *out)
{
    static const char *const env[][2] = {{"TORCH_NCCL_ASYNC_ERROR_HANDLING", "1"},
                                         {"TORCH_NCCL_TRACE_BUFFER_SIZE", "2000"},
                                         {"TORCH_NCCL_DUMP_ON_TIMEOUT", "1"}};
    for (size_t i = 0; i < sizeof(env) / sizeof(env[0]); i++)
        if (!profile_sets(profile, env[i][0]))
            util_buf_addf(out, "                - name: %s\n                  value: \"%s\"\n",
                          env[i][0], env[i][1]);
}

static int replica(const json_t *profile, const char *kind, long long replicas,
                   struct util_buf *out)
{
    struct gen_shape shape;
    gen_shape(profile, &shape);
    util_buf_addf(
        out,
        "    %s:\n"
        "      replicas: %lld\n"
        "      restartPolicy: OnFailure\n"
        "      template:\n"
        "        spec:\n"
        "          containers:\n"
        "            - name: pytorch\n"
        "              image: REPLACE_WITH_YOUR_IMAGE\n"
        "              command: [\"torchrun\", \"--nproc_per_node=%lld\", \"train.py\"]\n",
        kind, replicas, shape.ppn);
    if (shape.gpus > 0)
        util_buf_addf(out,
                      "              resources:\n"
                      "                limits:\n"
                      "                  nvidia.com/gpu: %lld\n",
                      shape.gpus);
    util_buf_adds(out, "              securityContext:\n"
                       "                capabilities:\n"
                       "                  add: [\"IPC_LOCK\"]\n"
                       "              volumeMounts:\n"
                       "                - name: dshm\n"
                       "                  mountPath: /dev/shm\n"
                       "              env:\n");
    torch_env(profile, out);
    if (json_array_size(json_object_get(profile, "tuner")))
        util_buf_adds(
            out,
            "                # topotune's NCCL tuner plugin and the profile's per-size table,\n"
            "                # where launch/Dockerfile.fragment puts them; calls the table does\n"
            "                # not decide go to the network plugin's tuner (or "
            "TOPOTUNE_NEXT_TUNER).\n"
            "                # Off: remove NCCL_TUNER_PLUGIN.\n"
            "                - name: NCCL_TUNER_PLUGIN\n"
            "                  value: \"" IMAGE_PLUGIN "\"\n"
            "                - name: TOPOTUNE_TUNER_TABLE\n"
            "                  value: \"/opt/topotune/profile/tuner-table.txt\"\n");
    if (gen_each_var(profile, yaml_env, out))
        return -1;
    util_buf_adds(out, "          volumes:\n"
                       "            - name: dshm\n"
                       "              emptyDir:\n"
                       "                medium: Memory\n"
                       "                sizeLimit: 16Gi\n");
    return 0;
}

static int emit_pytorchjob(const json_t *profile, struct util_buf *out)
{
    gen_header(profile, "launch/pytorchjob.yaml", out);
    struct gen_shape shape;
    gen_shape(profile, &shape);
    util_buf_addf(out,
                  "# Kubeflow PyTorchJob: the operator sets RANK/WORLD_SIZE; torchrun starts the "
                  "local ranks.\n"
                  "# The shape measured: %lld node(s) (a Master%s) x %lld rank(s) per node "
                  "(--nproc_per_node).\n"
                  "# Another shape: change both; the per-size table applies only to the shapes "
                  "it was\n"
                  "# measured on (profile.json, \"tuner\": nodes, ranks).\n"
                  "---\n"
                  "apiVersion: kubeflow.org/v1\n"
                  "kind: PyTorchJob\n"
                  "metadata:\n"
                  "  name: topotune-%.40s\n"
                  "spec:\n"
                  "  pytorchReplicaSpecs:\n",
                  shape.nodes, shape.nodes > 1 ? " and Workers" : "", shape.ppn,
                  json_string_value(json_object_get(profile, "content_hash")));
    if (replica(profile, "Master", 1, out))
        return -1;
    return shape.nodes > 1 ? replica(profile, "Worker", shape.nodes - 1, out) : 0;
}

static int docker_env(const char *name, const char *value, const char *role, void *ctx)
{
    (void)role;
    if (per_node_note(ctx, "", name))
        return 0;
    util_buf_addf(ctx, "ENV %s=", name);
    util_quote_dockerfile(ctx, value);
    util_buf_adds(ctx, "\n");
    return 0;
}

static int emit_dockerfile(const json_t *profile, struct util_buf *out)
{
    gen_header(profile, "launch/Dockerfile.fragment", out);
    util_buf_adds(
        out,
        "# Add to the image's Dockerfile, with the profile directory in the build context as "
        "./topotune-profile.\n"
        "# Run containers with --shm-size=16g (or --ipc=host) and --ulimit memlock=-1 for RDMA.\n"
        "COPY topotune-profile /opt/topotune/profile\n"
        "ENV NCCL_CONF_FILE=/opt/topotune/profile/nccl.conf\n"
        "ENV TOPOTUNE_PROFILE=/opt/topotune/profile\n");
    if (json_array_size(json_object_get(profile, "tuner")))
        util_buf_adds(
            out,
            "# topotune's NCCL tuner plugin, which applies the profile's per-size table "
            "(tuner-table.txt)\n"
            "# inside NCCL: put the libnccl-tuner-topotune.so built from topotune's sources (cmake "
            "--build\n"
            "# build: build/tuner/; installed: PREFIX/lib) in the build context next to the "
            "profile.\n"
            "# The base image's tuner, if it names one, stays next: it gets every call the table\n"
            "# does not decide. Off: remove the NCCL_TUNER_PLUGIN line. The library needs a C\n"
            "# library as new as the one it was built with (objdump -T lists the GLIBC_ versions\n"
            "# it asks for): in an older image NCCL leaves it out with an INFO line only, so "
            "build\n"
            "# it there, and let topotune verify --backend nccl show that it loads.\n"
            "COPY libnccl-tuner-topotune.so " IMAGE_PLUGIN "\n"
            "# (an image built on one that had this fragment already saved its base's: kept;\n"
            "# auto: the base named none, and the plugin looks where NCCL would)\n"
            "ENV TOPOTUNE_NEXT_TUNER=${TOPOTUNE_NEXT_TUNER:-${NCCL_TUNER_PLUGIN:-auto}}\n"
            "ENV NCCL_TUNER_PLUGIN=" IMAGE_PLUGIN "\n"
            "ENV TOPOTUNE_TUNER_TABLE=/opt/topotune/profile/tuner-table.txt\n");
    else
        util_buf_adds(out, "# No tuner table row: topotune's tuner plugin is not needed.\n");
    util_buf_adds(
        out,
        "# The profile's own variables, as nccl.env sets them: the image and the profile agree,\n"
        "# and a value from the base image does not silently win over the measured one.\n");
    return gen_each_var(profile, docker_env, out);
}

/* The class as a label value, and a name suffix: the content hash's first 12 characters. */
static void names(const json_t *profile, char cls[64], char id[16])
{
    ops_k8s_label_value(json_string_value(json_object_get(profile, "class")), cls);
    snprintf(id, 16, "%.12s", json_string_value(json_object_get(profile, "content_hash")));
}

static int emit_check_daemonset(const json_t *profile, struct util_buf *out)
{
    gen_header(profile, "launch/check-daemonset.yaml", out);
    char cls[64], id[16];
    names(profile, cls, id);
    /* one DaemonSet per class, named after the class, not the version: a new version's manifest
     * replaces the old one's, which else went on checking against the old band, writing the same
     * metrics file on the same nodes */
    char *class_hash = util_json_hash(json_object_get(profile, "class"));
    snprintf(id, sizeof(id), "%.12s", class_hash ? class_hash : "0");
    free(class_hash);
    util_buf_addf(
        out,
        "# topotune check on every node of the class labelled topotune.io/check=enabled (a node\n"
        "# whose GPUs run a job's processes is not measured, its last metrics kept): doctor, a\n"
        "# short run against this profile's band, its metrics in node_exporter's textfile folder. "
        "The\n"
        "# image: one built with launch/Dockerfile.fragment and topotune installed. The GPUs are\n"
        "# reached through NVIDIA_VISIBLE_DEVICES, as a monitoring agent's, so that the pod holds\n"
        "# none; the interval is TOPOTUNE_CHECK_INTERVAL seconds.\n"
        "---\n"
        "apiVersion: apps/v1\n"
        "kind: DaemonSet\n"
        "metadata:\n"
        "  name: topotune-check-%s\n"
        "  labels:\n"
        "    app.kubernetes.io/name: topotune-check\n"
        "spec:\n"
        "  selector:\n"
        "    matchLabels:\n"
        "      app.kubernetes.io/name: topotune-check\n"
        "      app.kubernetes.io/instance: topotune-check-%s\n"
        "  template:\n"
        "    metadata:\n"
        "      labels:\n"
        "        app.kubernetes.io/name: topotune-check\n"
        "        app.kubernetes.io/instance: topotune-check-%s\n"
        "    spec:\n"
        "      nodeSelector:\n"
        "        " OPS_K8S_PREFIX "class: \"%s\"\n"
        "        " OPS_K8S_PREFIX "check: \"enabled\"\n"
        "      tolerations:\n"
        "        - key: " OPS_K8S_PREFIX "unhealthy\n"
        "          operator: Exists\n"
        "          effect: NoSchedule\n"
        "      containers:\n"
        "        - name: check\n"
        "          image: REPLACE_WITH_YOUR_IMAGE\n"
        "          command: [\"/bin/sh\", \"-c\"]\n"
        "          args:\n"
        "            - |\n"
        "              while :; do\n"
        "                topotune check --profile /opt/topotune/profile \\\n"
        "                    --metrics /textfile/topotune-check.prom\n"
        "                sleep \"$TOPOTUNE_CHECK_INTERVAL\"\n"
        "              done\n"
        "          env:\n"
        "            - name: NVIDIA_VISIBLE_DEVICES\n"
        "              value: \"all\"\n"
        "            - name: TOPOTUNE_CHECK_INTERVAL\n"
        "              value: \"3600\"\n"
        "          securityContext:\n"
        "            capabilities:\n"
        "              add: [\"IPC_LOCK\"]\n"
        "          volumeMounts:\n"
        "            - name: dshm\n"
        "              mountPath: /dev/shm\n"
        "            - name: textfile\n"
        "              mountPath: /textfile\n"
        "      volumes:\n"
        "        - name: dshm\n"
        "          emptyDir:\n"
        "            medium: Memory\n"
        "            sizeLimit: 16Gi\n"
        "        - name: textfile\n"
        "          hostPath:\n"
        "            path: /var/lib/node_exporter/textfile\n"
        "            type: DirectoryOrCreate\n",
        id, id, id, cls);
    return 0;
}

static int emit_survey_job(const json_t *profile, struct util_buf *out)
{
    gen_header(profile, "launch/survey-job.yaml", out);
    char cls[64], id[16];
    names(profile, cls, id);
    util_buf_addf(
        out,
        "# topotune survey of the hosts listed in the ConfigMap, one per line, through mpirun\n"
        "# (the hosts take passwordless ssh from this pod, with topotune-bench at the same path):\n"
        "# the slow or broken nodes and links named, the labels and taints printed (its log),\n"
        "# the survey's metrics and report in the results claim (a pod's own volume is deleted\n"
        "# with it: read them from the claim, kubectl cp, or a pod that mounts it). The image: as\n"
        "# the check's.\n"
        "---\n"
        "apiVersion: v1\n"
        "kind: PersistentVolumeClaim\n"
        "metadata:\n"
        "  name: topotune-survey-results-%s\n"
        "spec:\n"
        "  # storageClassName: NAME  (where the cluster has no default StorageClass: else the\n"
        "  # claim and the Job stay Pending; kubectl delete -f of this file deletes the results)\n"
        "  accessModes: [\"ReadWriteOnce\"]\n"
        "  resources:\n"
        "    requests:\n"
        "      storage: 1Gi\n"
        "---\n"
        "apiVersion: v1\n"
        "kind: ConfigMap\n"
        "metadata:\n"
        "  name: topotune-survey-hosts-%s\n"
        "data:\n"
        "  hosts: |\n"
        "    # one host per line (the nodes of class %s)\n"
        "---\n"
        "apiVersion: batch/v1\n"
        "kind: Job\n"
        "metadata:\n"
        "  name: topotune-survey-%s\n"
        "  labels:\n"
        "    app.kubernetes.io/name: topotune-survey\n"
        "spec:\n"
        "  backoffLimit: 0\n"
        "  template:\n"
        "    metadata:\n"
        "      labels:\n"
        "        app.kubernetes.io/name: topotune-survey\n"
        "    spec:\n"
        "      restartPolicy: Never\n"
        "      containers:\n"
        "        - name: survey\n"
        "          image: REPLACE_WITH_YOUR_IMAGE\n"
        "          command: [\"topotune\", \"survey\", \"--hostfile\", \"/etc/topotune/hosts\",\n"
        "                    \"--out\", \"/results/survey\", \"--metrics\", "
        "\"/results/survey.prom\",\n"
        "                    \"--kubernetes\"]\n"
        "          volumeMounts:\n"
        "            - name: hosts\n"
        "              mountPath: /etc/topotune\n"
        "            - name: results\n"
        "              mountPath: /results\n"
        "      volumes:\n"
        "        - name: hosts\n"
        "          configMap:\n"
        "            name: topotune-survey-hosts-%s\n"
        "        - name: results\n"
        "          persistentVolumeClaim:\n"
        "            claimName: topotune-survey-results-%s\n",
        id, id, cls, id, id, id);
    return 0;
}

const struct gen_emitter gen_emit_check_daemonset = {"launch/check-daemonset.yaml", 0,
                                                     emit_check_daemonset};
const struct gen_emitter gen_emit_survey_job = {"launch/survey-job.yaml", 0, emit_survey_job};
const struct gen_emitter gen_emit_pytorchjob = {"launch/pytorchjob.yaml", 0, emit_pytorchjob};
const struct gen_emitter gen_emit_dockerfile = {"launch/Dockerfile.fragment", 0, emit_dockerfile};
