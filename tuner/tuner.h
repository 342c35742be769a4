/* SPDX-License-Identifier: MIT */
/*
 * libnccl-tuner-topotune.so: an NCCL tuner plugin that applies a profile's per-size choices
 * (algorithm, protocol, channels) inside NCCL, and the table format it reads.
 *
 * What it does. NCCL asks a tuner plugin, for every collective call, which algorithm and
 * protocol to use, passing the message size and its own cost table (its predicted time per
 * algorithm/protocol pair). This plugin looks the call up in a table that `topotune gen` wrote
 * from a sweep measured on the same kind of node: per collective, byte range, node count and
 * rank count, a choice of algorithm, protocol and optionally a channel count. On a hit it makes
 * NCCL pick that pair by setting its cost to 0 (another entry NCCL itself costed at exactly 0
 * becomes the smallest positive float, so the choice wins) and sets the channel count when the
 * row gives one. It never picks a pair NCCL marked unavailable (cost -1, for example NVLS without
 * NVSwitch, or a pair excluded by NCCL_ALGO/NCCL_PROTO): then, as for every call the table does
 * not cover, NCCL's cost table and channel count are left exactly as they were.
 *
 * Deploying it. Install the library (`cmake --install` puts it in PREFIX/lib or the distro's
 * libdir) and the profile's table, then set, in the job's environment:
 *     NCCL_TUNER_PLUGIN=/path/to/libnccl-tuner-topotune.so    (or "topotune" when the library
 *                                                               is on the loader's path)
 *     TOPOTUNE_TUNER_TABLE=/path/to/tuner-table.txt           (or NCCL_TUNER_CONFIG_FILE; when
 *                                                               both are set this one wins)
 *     TOPOTUNE_CLASS=<node class id>                          (optional: the node's class,
 *                                                               when the job knows it)
 *     TOPOTUNE_NEXT_TUNER=<the NCCL_TUNER_PLUGIN the job had> (optional; see "The chain")
 *     TOPOTUNE_TUNER_DIGEST=<the table's digest>              (optional; see "One table")
 * In a container image, copy both files into the image and set the same variables. The
 * library needs only the C library (no topotune library, no hwloc, no Jansson).
 *
 * Turning it off: unset NCCL_TUNER_PLUGIN (NCCL then no longer loads this library, which is not
 * named libnccl-tuner.so, and uses its own model or whatever tuner the net plugin carries), or
 * set it to "none" (NCCL 2.28 and later: no tuner at all). Unsetting only the table variable
 * also leaves NCCL's defaults, but with a warning per communicator.
 *
 * Which NCCL versions. The library exports the interface structures NCCL 2.21 to 2.30 resolve:
 * ncclTunerPlugin_v6 (2.30), _v5 (2.28, 2.29), _v4 (2.24 to 2.27), _v3 (2.22, 2.23) and _v2
 * (2.21); each NCCL takes the newest it knows (tuner/nccl-tuner-abi.h says where each layout
 * comes from). NCCL 2.19 and 2.20 look for v1 only and do not load it. With v2 (NCCL 2.21)
 * NCCL passes no cost table and applies the plugin's choice unchecked, so there the plugin
 * applies only pairs every 2.21 communicator has: ring with LL or Simple, tree with LL or
 * Simple for allreduce, NVLS (Simple) where NCCL reports NVLS support on one node (or CollNet
 * across nodes, allreduce), NVLS tree (Simple, allreduce) across nodes with NVLS support; it
 * applies nothing when NCCL_ALGO or NCCL_PROTO is set; LL128, CollNet and PAT rows are skipped.
 *
 * The chain. NCCL loads one tuner, so this one passes on what its table does not decide to the
 * tuner NCCL would have loaded without it (docs/design.md, "The tuner plugin's chain"):
 * TOPOTUNE_NEXT_TUNER (a library name or path as NCCL_TUNER_PLUGIN takes it; "none": none;
 * "auto", what an image's Dockerfile fragment saves when its base named no tuner: as unset),
 * else libnccl-tuner.so, else the network plugin's library (NCCL_NET_PLUGIN, else
 * libnccl-net.so), when it exports ncclTunerPlugin_v2..v6 and is not this library. The next
 * tuner gets every init and destroy, and every call no row decides.
 *
 * When the table does not fit the job it is not used at all, with ONE warning through NCCL's
 * logger (shown at NCCL_DEBUG=WARN or INFO) per communicator, and the next tuner (or NCCL's
 * defaults) decides: no table variable set, a file that cannot be read, a malformed line, a
 * `class=` header other than TOPOTUNE_CLASS (when that is set), a `gpus=` or `gpu_model=`
 * header other than what the NVIDIA driver lists on this node (/proc/driver/nvidia/gpus; not
 * checked when that cannot be read), or an NCCL version (ncclGetVersion of the library that
 * loaded the plugin; not checked when that library exports none) outside the table's
 * nccl_min..nccl_max. It never aborts the job, and
 * returns an error to NCCL (which fails the communicator's init) only as "One table" says.
 *
 * One table. NCCL does not check that its ranks chose alike, and a rank that leaves a call to
 * NCCL while its peers apply a row hangs the job. gen writes the table's digest in its own
 * `digest=` header, and a table whose rows are not the ones it names (a copy cut short, edited) is
 * left out as damaged. The launch scripts read that header and pass it as TOPOTUNE_TUNER_DIGEST
 * (mpirun's forwards the launching node's; each node's torchrun its own): when it is set, a rank
 * whose table is not that very one (none, unreadable, damaged, another digest) fails the
 * communicator's init with one warning saying why, instead of deciding otherwise than its peers.
 * Another kind of node and another NCCL are refused alike by every rank of a job of one kind, so
 * they leave the table out with a warning, digest or not (a job mixing kinds of nodes or NCCL
 * versions is not one this protects). A table without a row for the communicator's nodes and ranks
 * is the same on every rank, and stays NCCL's.
 *
 * Logs. At NCCL_DEBUG=INFO (subsystem INIT or TUNING) one line per communicator says which
 * table was loaded, its rows, and how many apply to this communicator's nodes and ranks. With
 * NCCL_DEBUG_SUBSYS including TUNING each decision is logged the first time a communicator makes
 * it (not every call: a job logs as much with the plugin as without): each row applied or
 * unavailable here, and per collective the first call no row matched.
 *
 * State. Each communicator reads and checks the table in its own init and keeps it in its own
 * context until destroy; calls only read that context. The only global state is a set of atomic
 * flags (what has been said once), so any number of communicators in any number of threads may
 * use the plugin at once.
 *
 * The table format, version 1 (what `topotune gen` writes; a text file, at most
 * TUNER_TABLE_MAX_BYTES, lines at most TUNER_TABLE_MAX_LINE bytes, LF or CRLF):
 *
 *     # topotune tuner table 1
 *     # class=h100-sxm5-80gb-8x-nvs-1a2b3c4d
 *     # nccl_min=2.21.5
 *     # nccl_max=2.28.9
 *     collective,min_bytes,max_bytes,nodes,ranks,algorithm,protocol,channels
 *     allreduce,0,262143,1,8,tree,ll,0
 *     allreduce,262144,inf,1,8,nvls,simple,16
 *
 * - Line 1 is exactly TUNER_TABLE_MAGIC (spaces around it allowed). Another version number is
 *   refused.
 * - Header lines follow: `# key=value` (spaces around key and value allowed; a key in any case).
 *   `class` (the node class id the table was measured on: 1 to TUNER_CLASS_MAX bytes, no space),
 *   `nccl_min` and `nccl_max` (MAJOR.MINOR.PATCH, minor and patch below 100: the inclusive range
 *   of NCCL versions the table is valid for, either may be left out) are read; other keys
 *   ([A-Za-z0-9_]+) are ignored; any of them given twice is an error. `digest` (TUNER_DIGEST_CHARS
 *   lowercase hex digits: what topotune gen computed of the table's rows, see "One table") is
 *   checked against them; `rows` (their count, which gen writes for its launch scripts) is not
 *   read here. `gpus` (GPUs per node, 1 to 4096) and `gpu_model` (the driver's model name, spaces
 *   allowed) name the kind of node measured on. Other `#` lines and blank lines are comments.
 * - Then the column line, exactly TUNER_TABLE_COLUMNS. It is required, even with no rows.
 * - Then one row per line: `collective,min_bytes,max_bytes,nodes,ranks,algorithm,protocol[,
 *   channels]`. collective: broadcast|reduce|allgather|reducescatter|allreduce (NCCL's names,
 *   any case). min_bytes, max_bytes: decimal, inclusive, min <= max; max may be `inf` (or
 *   18446744073709551615). nodes, ranks: a decimal >= 1, or `*` for any; nodes as NCCL
 *   counts them, which its tuner API passes (one NVLink domain's hosts are one node). algorithm:
 *   tree|ring|collnet_direct|collnet_chain|nvls|nvls_tree|pat. protocol: ll|ll128|simple.
 *   channels: 0..TUNER_MAX_CHANNELS, 0 or empty or absent = NCCL's own count; passed to NCCL
 *   at most TUNER_NCCL_MAX_CHANNELS. Spaces or tabs
 *   around a field are ignored. After the column line, blank lines and `#` lines are comments.
 * - At most TUNER_TABLE_MAX_ROWS rows. The first row (in file order) whose collective, byte
 *   range, nodes and ranks match a call decides it, so more specific rows go first; when that
 *   row's pair is unavailable, NCCL decides (later rows are not tried).
 * Anything else (an unknown name, a number out of range, a missing column line, a NUL byte, a
 * line or file over the limits) makes the whole table malformed.
 */
#ifndef TUNER_TUNER_H
#define TUNER_TUNER_H

#include <stddef.h>
#include <stdint.h>

#define TUNER_TABLE_MAGIC     "# topotune tuner table 1"
#define TUNER_TABLE_COLUMNS   "collective,min_bytes,max_bytes,nodes,ranks,algorithm,protocol,channels"
#define TUNER_TABLE_MAX_ROWS  4096
#define TUNER_TABLE_MAX_LINE  1024      /* bytes, without the line end */
#define TUNER_TABLE_MAX_BYTES (1 << 20) /* the whole file */
#define TUNER_MAX_CHANNELS    64
#define TUNER_CLASS_MAX       255 /* bytes of a class id */
#define TUNER_ANY             0   /* nodes or ranks written `*` */

/* The plugin's `name` field, which NCCL prints when it loads the plugin. */
#define TUNER_PLUGIN_NAME "topotune"

/* Environment variables the plugin reads, in the order it looks at the first two. */
#define TUNER_ENV_TABLE       "TOPOTUNE_TUNER_TABLE"
#define TUNER_ENV_NCCL_TABLE  "NCCL_TUNER_CONFIG_FILE"
#define TUNER_ENV_CLASS       "TOPOTUNE_CLASS"
#define TUNER_ENV_NEXT        "TOPOTUNE_NEXT_TUNER"   /* the tuner the job had: see the chain */
#define TUNER_ENV_DRIVER_GPUS "TOPOTUNE_DRIVER_GPUS"  /* tests: another TUNER_DRIVER_GPUS */
#define TUNER_ENV_DIGEST      "TOPOTUNE_TUNER_DIGEST" /* the job's table: see "One table" */

/* Where the NVIDIA driver lists this node's GPUs, one directory each with an `information`
 * file ("Model: NVIDIA H100 80GB HBM3"). */
#define TUNER_DRIVER_GPUS "/proc/driver/nvidia/gpus"

/* The most channels a row's count is passed on as: NCCL's MAXCHANNELS in the releases where it
 * is smallest (32; later ones have 64 and clamp to the communicator's own count, except for
 * CollNet and NVLS across nodes, whose count NCCL takes as given: a row's is never passed for
 * them). */
#define TUNER_NCCL_MAX_CHANNELS 32

/* Error codes of this module (0 is success). */
enum {
    TUNER_EFORMAT = -1, /* the text is not a valid table */
    TUNER_ELIMIT = -2,  /* a line, the file or the row count is over its limit */
    TUNER_ENOMEM = -3,
    TUNER_EIO = -4, /* the file cannot be opened or read */
};

/* Collectives, with NCCL's ncclFunc_t values. */
enum tuner_coll {
    TUNER_COLL_BROADCAST = 0,
    TUNER_COLL_REDUCE = 1,
    TUNER_COLL_ALLGATHER = 2,
    TUNER_COLL_REDUCESCATTER = 3,
    TUNER_COLL_ALLREDUCE = 4,
    TUNER_NUM_COLLS = 5,
};

/* Algorithms and protocols, with NCCL's cost-table indices. */
enum tuner_algo {
    TUNER_ALGO_TREE = 0,
    TUNER_ALGO_RING = 1,
    TUNER_ALGO_COLLNET_DIRECT = 2,
    TUNER_ALGO_COLLNET_CHAIN = 3,
    TUNER_ALGO_NVLS = 4,
    TUNER_ALGO_NVLS_TREE = 5,
    TUNER_ALGO_PAT = 6,
    TUNER_NUM_ALGOS = 7,
};

enum tuner_proto {
    TUNER_PROTO_LL = 0,
    TUNER_PROTO_LL128 = 1,
    TUNER_PROTO_SIMPLE = 2,
    TUNER_NUM_PROTOS = 3,
};

/* One row of the table. */
struct tuner_rule {
    uint64_t min_bytes, max_bytes; /* inclusive */
    uint32_t nodes, ranks;         /* TUNER_ANY or an exact count */
    uint8_t coll;                  /* enum tuner_coll */
    uint8_t algo;                  /* enum tuner_algo */
    uint8_t proto;                 /* enum tuner_proto */
    uint8_t channels;              /* 0 = NCCL's own */
    uint32_t line;                 /* line number in the file, for logs */
};

/* A parsed table. nccl_min/nccl_max are version codes (tuner_version_code), 0 when absent. */
struct tuner_table {
    char class_id[TUNER_CLASS_MAX + 1];  /* "" when the table has no class= header */
    char gpu_model[TUNER_CLASS_MAX + 1]; /* "" when the table has no gpu_model= header */
    unsigned gpus;                       /* GPUs per node measured on; 0 when not given */
    unsigned nccl_min, nccl_max;
    struct tuner_rule *rules; /* in file order; owned, freed by tuner_table_release */
    size_t nrules;
    uint64_t digest;   /* of what decides calls: see tuner_digest_format */
    uint64_t declared; /* the `digest=` header's, when has_declared */
    int has_declared;
};

#define TUNER_TABLE_INIT                                                                           \
    {                                                                                              \
        {0}, {0}, 0, 0, 0, NULL, 0, 0, 0, 0                                                        \
    }

/*
 * Parses the table text `text` of `len` bytes (no terminating NUL needed) into `t`, which
 * must be TUNER_TABLE_INIT or released. Returns 0, or a TUNER_E* code with `t` empty and a
 * one-line reason in `err` ("line 7: unknown algorithm \"treee\""; may be NULL).
 */
int tuner_table_parse(struct tuner_table *t, const char *text, size_t len, char *err, size_t errsz);

/* Reads the file at `path` (a regular file, at most TUNER_TABLE_MAX_BYTES) and parses it as
 * tuner_table_parse does. TUNER_EIO when it cannot be opened or read. */
int tuner_table_load(struct tuner_table *t, const char *path, char *err, size_t errsz);

/* Frees what `t` owns and leaves it empty (TUNER_TABLE_INIT). */
void tuner_table_release(struct tuner_table *t);

/* Does `r` apply to a communicator of `nodes` nodes and `ranks` ranks? */
int tuner_rule_fits(const struct tuner_rule *r, uint64_t nodes, uint64_t ranks);

/* The first row of `t` for collective `coll` and size `bytes` that fits `nodes` x `ranks`,
 * or NULL. The pointer is into `t` and lives as long as it. */
const struct tuner_rule *tuner_table_match(const struct tuner_table *t, int coll, uint64_t bytes,
                                           uint64_t nodes, uint64_t ranks);

/* A table's digest (struct tuner_table's digest, set by the parse) is FNV-1a (64 bits) of what
 * decides calls, as text: "class=C\ngpu_model=M\ngpus=G\nnccl=MIN-MAX\n" ("" and 0 when
 * absent; version codes), then a line "COLL,MIN,MAX,NODES,RANKS,ALGO,PROTO,CHANNELS\n" per row
 * in file order (the enums' numbers, 0 for `*`, decimal). Comments, spaces and line ends do not
 * count: two copies with one digest decide every call alike. The launch scripts pass it in
 * TUNER_ENV_DIGEST as TUNER_DIGEST_CHARS lowercase hex digits (tuner_digest_format);
 * tuner_digest_parse reads that form back (0, or -1 for anything else). */
#define TUNER_DIGEST_CHARS 16
void tuner_digest_format(uint64_t digest, char buf[TUNER_DIGEST_CHARS + 1]);

/* Is `t` whole (its own `digest=` header, when it has one, is its rows' digest) and the one a job
 * named (`named`: TUNER_ENV_DIGEST's text, or NULL when none is named)? 0, or -1 with why (one
 * line, "it is not the table ..." or "its rows are not ..."). */
int tuner_table_identity(const struct tuner_table *t, const char *named, char *why, size_t len);
int tuner_digest_parse(const char *text, uint64_t *digest);

/* NCCL's version code for MAJOR.MINOR.PATCH as ncclGetVersion returns it from 2.9 on:
 * major * 10000 + minor * 100 + patch. */
unsigned tuner_version_code(unsigned major, unsigned minor, unsigned patch);

/* Writes `code` as "2.28.9" into `buf` (codes below 10000 are NCCL's pre-2.9 form). */
void tuner_version_format(unsigned code, char *buf, size_t bufsz);

/* The table's names of a collective, algorithm or protocol; "?" when out of range. */
const char *tuner_coll_name(int coll);
const char *tuner_algo_name(int algo);
const char *tuner_proto_name(int proto);

#endif
