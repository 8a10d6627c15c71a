/**
 * Build step: writes Prism's operations of the bundled spec to dist/prism-operations.json, keyed by
 * the spec's hash, so that `acs-mock` starts without dereferencing the document (a few hundred ms).
 */
import { writeFileSync } from "node:fs";
import { computeOperations, specHash } from "../src/prism.js";

const operations = await computeOperations();
writeFileSync(new URL("../dist/prism-operations.json", import.meta.url), JSON.stringify({ specHash: specHash(), operations }));
console.log(`dist/prism-operations.json: ${operations.length} operations`);
