#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# doctor --hosts on one machine through mpirun (the real topotune-node): --profile given as the
# profile.json file is read on every node as it is here.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TEST_TMP" || exit 1
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
# --profile DIR/profile.json: each node read ".../profile.json/profile.json" and failed.
cls=$("$TOPOTUNE" topo --json 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["class"]["id"])')
mkdir -p p
printf '{"schema": "topotune/profile/1", "class": "%s", "version": 1, "predicted": false, "variables": []}\n' \
    "$cls" >p/profile.json
"$TOPOTUNE" doctor --hosts localhost --profile p/profile.json --json >hosts.json 2>hosts.err
check "the node read the profile" python3 - hosts.json <<'PY'
import json, sys
text = json.dumps(json.load(open(sys.argv[1])))
assert "profile.json/profile.json" not in text and "cannot read" not in text, text[:2000]
PY
# a profile file of another name: each node read the profile.json beside it, another profile
mkdir -p q
printf '{"schema": "topotune/profile/1", "class": "%s", "version": 1, "predicted": false, "variables": []}\n' \
    "$cls" >q/mine.json
printf '{"schema": "topotune/profile/1", "class": "other-class-12345678", "version": 1, "predicted": false, "variables": []}\n' \
    >q/profile.json
"$TOPOTUNE" doctor --hosts localhost --profile q/mine.json --json >mine.json 2>mine.err
check "the node read mine.json, not the profile.json beside it" python3 - mine.json <<'PY'
import json, sys
text = json.dumps(json.load(open(sys.argv[1])))
assert "other-class-12345678" not in text and "cannot read" not in text, text[:2000]
PY
finish
