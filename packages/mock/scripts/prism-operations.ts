/**
 * Build step: writes Prism's operations of the bundled spec to dist/prism-operations.json.gz, keyed
 * by the spec's hash, so that `acs-mock` starts without dereferencing the document (a few hundred
 * ms). Gzipped: every operation holds its schemas dereferenced, a JSON many times the document's
 * size that compresses to a tenth of it; reading it back costs a few milliseconds.
 */
import { writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { computeOperations, specHash } from "../src/prism.js";

const operations = await computeOperations();
const gzipped = gzipSync(JSON.stringify({ specHash: specHash(), operations }), { level: 9 });
writeFileSync(new URL("../dist/prism-operations.json.gz", import.meta.url), gzipped);
console.log(`dist/prism-operations.json.gz: ${operations.length} operations, ${gzipped.length} bytes`);
