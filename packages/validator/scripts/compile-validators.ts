/**
 * Build step: compiles the bundled events schema into AJV standalone validators (ESM, no runtime
 * dependency, no `new Function`), so importing the validator costs no schema compilation and works
 * under a strict Content-Security-Policy.
 *
 * Two variants are emitted: `fast` (stops at the first error; the hot path for valid events) and
 * `full` (every error, with the failing schema attached for readable messages), run only on failure.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { Name, _, str, type KeywordCxt } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import standalone from "ajv/dist/standalone/index.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const outDir = path.join(here, "../src/generated");
const require = createRequire(import.meta.url);
// ajv/dist/standalone is CommonJS with `exports.default`; NodeNext types see the namespace.
const standaloneCode = (standalone as unknown as { default: typeof standalone.default }).default;

/** The keyword that records where a legacy (deprecated) field was met; see `legacyKeyword`. */
export const LEGACY_KEYWORD = "x-legacy";

type Schema = unknown;

// Kept: `title`, `x-format-name` and `x-tags`, which readable messages quote.
const DROPPED_ANNOTATIONS = new Set(["description", "default", "writeOnly", "readOnly"]);

/**
 * AJV reads `discriminator` but rejects OpenAPI's `mapping` (our mappings only restate each
 * variant's `kind` const, so nothing is lost), and every `deprecated: true` property also gets
 * the legacy keyword. Annotations that validation never reads are dropped: the standalone code
 * embeds the schema, and they would make up most of its size.
 */
export function prepareSchema(node: Schema): Schema {
  if (Array.isArray(node)) return node.map(prepareSchema);
  if (typeof node !== "object" || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (DROPPED_ANNOTATIONS.has(key) && typeof value !== "object") continue;
    if (key === "examples" || key === "$comment") continue;
    if (key === "discriminator") {
      const { propertyName, mapping } = value as { propertyName: string; mapping?: Record<string, string> };
      out[key] = { propertyName };
      // Kept for messages ("expected one of text, image"), under a name AJV accepts.
      if (mapping) out["x-tags"] = Object.keys(mapping);
    }
    else out[key] = prepareSchema(value);
  }
  if (out.deprecated === true) out[LEGACY_KEYWORD] = true;
  return out;
}

function createAjv(allErrors: boolean) {
  const ajv = new Ajv2020({
    strict: true,
    strictRequired: false, // unions require `kind` without restating its schema
    allowUnionTypes: true,
    discriminator: true,
    allErrors,
    verbose: allErrors,
    messages: false, // messages are written by issues.ts
    passContext: true,
    inlineRefs: false, // one function per definition keeps the code small
    code: { source: true, esm: true, lines: false, optimize: 1 },
  });
  ajv.addVocabulary(["x-format-name", "x-secret", "x-tags"]);
  // Pushes the instance path of a legacy field onto `this.legacy` when the caller passes a context.
  ajv.addKeyword({
    keyword: LEGACY_KEYWORD,
    schemaType: "boolean",
    code(cxt: KeywordCxt) {
      const { gen, it } = cxt;
      gen.if(_`this && this.legacy`, () =>
        gen.code(_`this.legacy.push(${str`${new Name("instancePath")}${it.errorPath}`})`),
      );
    },
  });
  return ajv;
}

// Replaces AJV's one runtime import (code-point length for minLength/maxLength) with a local copy.
const UCS2 = /require\("ajv\/dist\/runtime\/ucs2length"\)\.default/g;
const UCS2_FN = `function ucs2length(s) {
  let length = 0, pos = 0, value;
  const len = s.length;
  while (pos < len) {
    length++;
    value = s.charCodeAt(pos++);
    if (value >= 0xd800 && value <= 0xdbff && pos < len) {
      value = s.charCodeAt(pos);
      if ((value & 0xfc00) === 0xdc00) pos++;
    }
  }
  return length;
}
`;

export async function compileValidators(eventsSchema: Schema) {
  const schema = prepareSchema(eventsSchema);
  const outputs: Record<string, string> = {};
  for (const variant of ["fast", "full"] as const) {
    const ajv = createAjv(variant === "full");
    ajv.addSchema(schema as object, "events");
    let code = standaloneCode(ajv, {
      validateEvent: "events",
      validateEventPage: "events#/$defs/EventPage",
    });
    code = code.replace(UCS2, "ucs2length");
    const leftover = /require\(([^)]*)\)/.exec(code);
    if (leftover) throw new Error(`standalone ${variant} validator still requires ${leftover[1]}`);
    outputs[variant] = `// Generated at build time from @acs-toolkit/schema's events.schema.json. Do not edit.\n${UCS2_FN}${code}`;
  }
  return outputs;
}

async function main() {
  const schemaPath = require.resolve("@acs-toolkit/schema/events.schema.json");
  const eventsSchema = JSON.parse(await readFile(schemaPath, "utf8")) as Schema;
  const outputs = await compileValidators(eventsSchema);
  await mkdir(outDir, { recursive: true });
  const declaration = `// Generated at build time. Do not edit.
import type { StandaloneValidator } from "../standalone.js";
export declare const validateEvent: StandaloneValidator;
export declare const validateEventPage: StandaloneValidator;
`;
  for (const [variant, code] of Object.entries(outputs)) {
    await writeFile(path.join(outDir, `validators-${variant}.js`), code);
    await writeFile(path.join(outDir, `validators-${variant}.d.ts`), declaration);
  }
  console.log(`compiled validators into ${path.relative(process.cwd(), outDir)}`);
}

await main();
