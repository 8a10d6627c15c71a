/**
 * The request validators of the bundled document as a Node process loads them: the build's
 * precompiled standalone code (dist/request-validators.cjs) when it was built from the same
 * document, compiled here otherwise, and shared by every app, live channel and recorded-state
 * reader of the process.
 */
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import type { ValidateFunction } from "ajv/dist/2020.js";
import { RequestValidators, type Json, type PrecompiledValidators } from "./request-validators.js";

/** sha256 of a document's JSON: what the build's validators were compiled from. */
export function documentHash(document: Json): string {
  return createHash("sha256").update(JSON.stringify(document)).digest("hex");
}

/** The build's file of precompiled request validators (next to the bundle in dist/; absent in src/). */
const PRECOMPILED_FILE = new URL("./request-validators.cjs", import.meta.url);

/**
 * The request validators the build compiled for `document` (dist/request-validators.cjs), by
 * schema `$id`; undefined when there is no such file (running from the sources) or it was built from
 * another document.
 */
export function loadPrecompiledValidators(document: Json, file: URL = PRECOMPILED_FILE): PrecompiledValidators | undefined {
  let built: { documentHash: string; validators: Record<string, ValidateFunction> };
  try {
    built = createRequire(import.meta.url)(fileURLToPath(file)) as typeof built;
  } catch {
    return undefined;
  }
  return built.documentHash === documentHash(document) ? new Map(Object.entries(built.validators)) : undefined;
}

const shared = new WeakMap<Json, RequestValidators>();

/**
 * The request validators of a document, compiled once per process and shared by every app, live
 * channel and recorded-state reader built over it (tests and the mock build many apps; a compile of
 * them all takes about 100 ms). Compiled before the first request is served, or loaded: the build
 * compiles them for the bundled document (loadPrecompiledValidators).
 */
export function sharedRequestValidators(document: Json): RequestValidators {
  let validators = shared.get(document);
  if (!validators) shared.set(document, (validators = new RequestValidators(document, loadPrecompiledValidators(document)).compileRequests()));
  return validators;
}
