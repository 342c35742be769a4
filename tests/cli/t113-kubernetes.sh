#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Kubernetes: a profile's launch/check-daemonset.yaml and launch/survey-job.yaml, and the nodes
# `survey --kubernetes` labels and taints, validate offline against the Kubernetes schemas of the
# npm package kubernetes-models (tools/install-deps.sh installs it); a broken manifest fails the
# same validation; label keys and values follow Kubernetes' syntax; a node a verdict names is
# tainted NoSchedule, a healthy one untainted; --profiles labels each class's profile version.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TEST_TMP" || exit 1
prefix=${TOPOTUNE_NPM_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/topotune-npm}
if ! command -v node >/dev/null || [ ! -d "$prefix/node_modules/kubernetes-models" ]; then
    echo "skipped: node or kubernetes-models missing (tools/install-deps.sh test installs them into $prefix)"
    finish
    exit 0
fi
ln -s "$prefix/node_modules" node_modules
cp "$TOPOTUNE_SRC/tests/cli/k8s-validate.mjs" .
to_json() { python3 -c 'import json, sys, yaml; json.dump([d for d in yaml.safe_load_all(open(sys.argv[1])) if d], open(sys.argv[2], "w"))' "$1" "$2"; }

# 1. A profile's manifests.
"$TOPOTUNE" sweep --backend sim --topology "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" \
    --space "$TOPOTUNE_SRC/profiles/spaces/nccl-quick.json" --repeat 1 --out s >/dev/null 2>&1
expect_exit 0 "gen" -- "$TOPOTUNE" gen --runs s --profiles p
dir=$(ls -d p/*/latest)
for m in check-daemonset survey-job; do
    check "$m.yaml is YAML" to_json "$dir/launch/$m.yaml" "$m.json"
done
expect_exit 0 "kubernetes-models: the DaemonSet, the claim, the ConfigMap and the Job are valid" -- \
    node k8s-validate.mjs check-daemonset.json survey-job.json
check "four objects checked" test "$(grep -c ': valid$' "$TEST_TMP/out")" = 4
# the survey's results outlive its pod: a claim, not the pod's own emptyDir (deleted with it)
check "the Job keeps its results in the claim it comes with" python3 - survey-job.json <<'PY'
import json, sys
claim, _, job = json.load(open(sys.argv[1]))
assert claim["kind"] == "PersistentVolumeClaim", claim["kind"]
vols = {v["name"]: v for v in job["spec"]["template"]["spec"]["volumes"]}
assert vols["results"]["persistentVolumeClaim"]["claimName"] == claim["metadata"]["name"], vols
PY
check "the DaemonSet runs topotune check on its class's nodes, writing metrics" python3 - check-daemonset.json "$dir" <<'PY'
import json, sys
(d,) = json.load(open(sys.argv[1]))
cls = json.load(open(sys.argv[2] + "/profile.json"))["class"]
spec = d["spec"]["template"]["spec"]
assert spec["nodeSelector"] == {"topotune.io/class": cls, "topotune.io/check": "enabled"}, spec["nodeSelector"]
c = spec["containers"][0]
assert "topotune check --profile /opt/topotune/profile" in c["args"][0] and "--metrics /textfile/" in c["args"][0], c
assert "resources" not in c, "the check pod must not hold the GPUs"
PY
python3 - survey-job.json broken.json <<'PY'
import json, sys
docs = json.load(open(sys.argv[1]))
docs[2]["spec"]["template"]["spec"]["containers"][0]["image"] = 3
docs[2]["spec"]["backoffLimit"] = "none"
json.dump(docs, open(sys.argv[2], "w"))
PY
expect_exit 1 "a broken Job fails the same validation" -- node k8s-validate.mjs broken.json
expect_stderr_has "image must be string" "it names the field"

# 2. survey --kubernetes: the labels and taints, as Node objects the schemas accept.
printf '{"schema": "topotune/sim-cluster/1", "nodes": [{"spec": "hgx-h100.json", "count": 4}], "faults": [{"kind": "slow-node", "hosts": ["node0002"], "factor": 0.3}]}\n' >c.json
"$TOPOTUNE" survey --backend sim --cluster c.json --out sv --kubernetes --profiles p >k.out 2>k.err
rc=$?
check "exit 1: node0002 named (exit $rc: $(tail -n 1 k.err))" test "$rc" -eq 1
check "the commands as Node objects: syntax and schema" python3 - k.out nodes.json <<'PY'
import json, re, shlex, sys
name = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
nodes = {}
for line in open(sys.argv[1]):
    w = shlex.split(line)
    assert w[:3] in (["kubectl", "label", "node"], ["kubectl", "taint", "node"]), w
    # options, then "--": the node and what follows are never read as options
    dash = w.index("--")
    assert all(o.startswith("--") for o in w[3:dash]), w
    node = w[dash + 1]
    n = nodes.setdefault(node, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node, "labels": {}}, "spec": {"taints": []}})
    for a in w[dash + 2:]:
        if w[1] == "label":
            k, v = a.split("=", 1)
            assert re.fullmatch(r"topotune\.io/" + name, k) and (v == "" or re.fullmatch(name, v)), a
            n["metadata"]["labels"][k] = v
        elif a.endswith("-"):
            n.setdefault("untaint", []).append(a)
        else:
            kv, effect = a.rsplit(":", 1)
            k, v = kv.split("=", 1)
            n["spec"]["taints"].append({"key": k, "value": v, "effect": effect})
assert sorted(nodes) == ["node0001", "node0002", "node0003", "node0004"], nodes
bad = nodes["node0002"]
assert bad["metadata"]["labels"]["topotune.io/health"] == "node-slow", bad
assert bad["spec"]["taints"] == [{"key": "topotune.io/unhealthy", "value": "node-slow", "effect": "NoSchedule"}], bad
for h in ("node0001", "node0003", "node0004"):
    n = nodes[h]
    assert n["metadata"]["labels"]["topotune.io/health"] == "healthy" and not n["spec"]["taints"], n
    assert n["untaint"] == ["topotune.io/unhealthy:NoSchedule-"], n
    assert n["metadata"]["labels"]["topotune.io/profile"] == "v1", n["metadata"]["labels"]
out = []
for n in nodes.values():
    n.pop("untaint", None)
    out.append(n)
json.dump(out, open(sys.argv[2], "w"))
PY
expect_exit 0 "kubernetes-models: the labelled and tainted Nodes are valid" -- node k8s-validate.mjs nodes.json
# Every link slow alike: the class is named (the network between them), no node is to blame:
# each node is labelled so and its taint from an earlier survey removed.
faults=""
for i in 1 2 3 4; do faults="$faults${faults:+,}{\"kind\": \"slow-link\", \"hosts\": [\"node000$i\"], \"factor\": 0.4}"; done
printf '{"schema": "topotune/sim-cluster/1", "nodes": [{"spec": "hgx-h100.json", "count": 4}], "faults": [%s]}\n' "$faults" >links.json
"$TOPOTUNE" survey --backend sim --cluster links.json --out svl --kubernetes >kl.out 2>kl.err
check "each node: health class-below-expected, untainted" python3 - kl.out <<'PY'
import shlex, sys
lines = [shlex.split(l) for l in open(sys.argv[1])]
for i in range(1, 5):
    node = "node%04d" % i
    mine = [w for w in lines if node in w]
    assert any(w[1] == "label" and "topotune.io/health=class-below-expected" in w for w in mine), mine
    assert any(w[1] == "taint" and w[-1] == "topotune.io/unhealthy:NoSchedule-" for w in mine), mine
PY
# a name kubectl or scontrol would read as an option or as every node never reaches them
printf -- '--all\nnode2\n' >bad-hosts
expect_exit 2 "a hostfile name that starts with '-'" -- "$TOPOTUNE" survey --hostfile bad-hosts --backend mpi --out b1
expect_exit 2 "--profiles without --kubernetes" -- "$TOPOTUNE" survey --backend sim --cluster c.json --out x --profiles p

# 3. --apply runs each command as it printed it. No API server runs here: kubectl is a stand-in
# that records its arguments, answers "not found" for a taint the node lacks, as kubectl does,
# and fails every call when told to.
mkdir -p bin
cat >bin/kubectl <<'SH'
#!/usr/bin/env bash
printf '%s\n' "$*" >>"$TEST_TMP/kubectl.calls"
[ -n "${KUBECTL_NOISY:-}" ] && { yes 'I1207 00:00:00 retrying' | head -n 5000 >&2; }
[ -n "${KUBECTL_DOWN:-}" ] && { echo "The connection to the server was refused" >&2; exit 1; }
case "$*" in *NoSchedule-) echo 'error: taint "topotune.io/unhealthy:NoSchedule" not found' >&2; exit 1 ;; esac
SH
chmod +x bin/kubectl
export TEST_TMP
expect_exit 1 "--apply: exit 1 for the verdict, the untaints' not found is no failure" -- \
    env PATH="$TEST_TMP/bin:$PATH" "$TOPOTUNE" survey --backend sim --cluster c.json --out y --kubernetes --apply
same_calls() { sed "s/^/kubectl /" kubectl.calls | cmp -s - "$1"; }
check "kubectl got exactly the printed commands" same_calls "$TEST_TMP/out"
rm -f kubectl.calls
expect_exit 3 "--apply when the API server does not answer: exit 3, said" -- env KUBECTL_DOWN=1 \
    PATH="$TEST_TMP/bin:$PATH" "$TOPOTUNE" survey --backend sim --cluster c.json --out z --kubernetes --apply
expect_stderr_has "node node0001: kubectl exited 1: The connection to the server was refused" "it names the node and kubectl's words"
check "every command was still tried" test "$(wc -l <kubectl.calls)" = 8
# a log longer than the part read (5,000 lines of retries, then the error): its last words shown
expect_exit 3 "--apply, kubectl's long log" -- env KUBECTL_DOWN=1 KUBECTL_NOISY=1 \
    PATH="$TEST_TMP/bin:$PATH" "$TOPOTUNE" survey --backend sim --cluster c.json --out z2 --kubernetes --apply
expect_stderr_has "retrying / The connection to the server was refused" "the log's end, not its start"
finish
