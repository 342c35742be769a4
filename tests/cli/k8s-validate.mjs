// SPDX-License-Identifier: MIT
// Validates Kubernetes objects offline against the JSON schemas the npm package kubernetes-models
// bundles (the API's own OpenAPI definitions). usage: node k8s-validate.mjs FILE.json...
// (each file a JSON array of objects). Needs node_modules/kubernetes-models beside this file or
// above it: the test links it there from tools/install-deps.sh's prefix. Exit 1 on any invalid.
import { readFileSync } from "node:fs";

let bad = 0;
for (const file of process.argv.slice(2)) {
    for (const doc of JSON.parse(readFileSync(file, "utf8"))) {
        const name = `${file}: ${doc.kind} ${doc.metadata?.name ?? "?"}`;
        const parts = String(doc.apiVersion).split("/");
        const mod = await import(`kubernetes-models/${parts.join("/")}`).catch(() => ({}));
        const Kind = mod[doc.kind];
        if (!Kind) {
            console.error(`${name}: no schema for ${doc.kind} of ${doc.apiVersion}`);
            bad++;
            continue;
        }
        try {
            new Kind(doc).validate();
            console.log(`${name}: valid`);
        } catch (e) {
            console.error(`${name}: ${e.message}`);
            bad++;
        }
    }
}
process.exit(bad ? 1 : 0);
