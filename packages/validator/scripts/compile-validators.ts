/**
 * Build step: compiles the bundled events schema into AJV standalone validators (ESM, no runtime
 * dependency, no `new Function`), so importing the validator costs no schema compilation and works
 * under a strict Content-Security-Policy.
 *
 * Two variants are emitted: `fast` (stops at the first error; the hot path for valid events) and
 * `full` (every error, with the failing schema attached for readable messages), run only on failure.
 * One pair serves every profile: the release keywords compare the profile's release, passed in the
 * validation context (`this.release`), and do nothing without one (the default profile).
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { Name, _, str, type KeywordCxt } from "ajv";
import { or, type Code } from "ajv/dist/compile/codegen/index.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import standalone from "ajv/dist/standalone/index.js";
import { LEGACY_KEYWORD, RELEASE_KEYWORD, TAG_RELEASES_KEYWORD, VALUE_RELEASE_KEYWORD, type ReleaseMark, type ValueReleases } from "../src/release-keywords.js";
import { INTERFACE_RELEASE } from "../src/profile.js";
import { prepareSchema } from "./prepare-schema.js";

const here = path.dirname(fileURLToPath(import.meta.url));
// Beside src/, never in it: src/ is the build's input, and a build writing its inputs cannot be cached soundly.
const outDir = path.join(here, "../generated");
const require = createRequire(import.meta.url);
// ajv/dist/standalone is CommonJS with `exports.default`; NodeNext types see the namespace.
const standaloneCode = (standalone as unknown as { default: typeof standalone.default }).default;

type Schema = unknown;

/**
 * The AJV instance the validators are compiled with. `discriminator: true` (the default) selects a
 * union's branch by its `kind` at once instead of trying each (`anyOf`); the validator benchmark
 * measures both modes (bench/validate.bench.ts) and the compiled code uses the faster.
 */
export function createAjv(allErrors: boolean, { discriminator = true } = {}) {
  const ajv = new Ajv2020({
    strict: true,
    strictRequired: false, // unions require `kind` without restating its schema
    allowUnionTypes: true,
    discriminator,
    allErrors,
    verbose: allErrors,
    messages: false, // messages are written by issues.ts
    passContext: true,
    inlineRefs: false, // one function per definition keeps the code small
    code: { source: true, esm: true, lines: false, optimize: 1 },
  });
  // Ajv2020 always tracks which properties each branch of a union evaluated (for unevaluatedProperties),
  // so anyOf runs every branch: a valid nullable reference still builds its null branch's error, and
  // an SDK action is still tested against the ClientAction pattern. No schema here uses
  // unevaluated* (prepareSchema refuses them), so the tracking is turned off before anything compiles.
  (ajv.opts as { unevaluated: boolean }).unevaluated = false;
  ajv.addVocabulary(["x-format-name", "x-secret", "x-tags", TAG_RELEASES_KEYWORD, ...(discriminator ? [] : ["discriminator"])]);
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
  // Under a profile (`this.release` set), rejects a variant or property the profile's release lacks.
  ajv.addKeyword({
    keyword: RELEASE_KEYWORD,
    schemaType: "object",
    code(cxt: KeywordCxt) {
      const { since, removed, core } = cxt.schema as ReleaseMark;
      const outside: Code[] = [];
      // A part of the interface catalogue that came after the first release: the interface profile has it.
      if (since !== undefined) outside.push(core ? _`(this.release < ${since} && this.release !== ${INTERFACE_RELEASE})` : _`this.release < ${since}`);
      if (removed !== undefined) outside.push(_`this.release >= ${removed}`);
      cxt.fail(_`this && this.release !== undefined && (${or(...outside)})`);
    },
  });
  // The same for single enum values (the `hook` source).
  ajv.addKeyword({
    keyword: VALUE_RELEASE_KEYWORD,
    schemaType: "object",
    code(cxt: KeywordCxt) {
      const values = Object.entries(cxt.schema as ValueReleases).map(([value, { since }]) => _`(${cxt.data} === ${value} && this.release < ${since})`);
      cxt.fail(_`this && this.release !== undefined && (${or(...values)})`);
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
  const outputs: Record<string, string> = {};
  for (const variant of ["fast", "full"] as const) {
    const ajv = createAjv(variant === "full");
    ajv.addSchema(prepareSchema(eventsSchema, variant), "events");
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
import type { StandaloneValidator } from "../src/standalone.js";
export declare const validateEvent: StandaloneValidator;
export declare const validateEventPage: StandaloneValidator;
`;
  for (const [variant, code] of Object.entries(outputs)) {
    await writeFile(path.join(outDir, `validators-${variant}.js`), code);
    await writeFile(path.join(outDir, `validators-${variant}.d.ts`), declaration);
  }
  console.log(`compiled validators into ${path.relative(process.cwd(), outDir)}`);
}

// Run as the build step (not when the benchmark imports createAjv).
if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) await main();
