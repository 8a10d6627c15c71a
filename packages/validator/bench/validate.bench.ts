/**
 * Validation throughput against JSON.parse of the same bytes, on a realistic mix: the recorded
 * corpus plus the spec-built events of every kind and variant. Prints events/s, MB/s and the
 * ratio (validation time / parse time; the target is ≤ 1.0).
 *
 *   pnpm --filter @acs-toolkit/validator bench [--smoke]
 */
import { appendFileSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { exampleEvents } from "@acs-toolkit/schema/examples";
import { validateEvent } from "../src/index.js";
import { createAjv } from "../scripts/compile-validators.js";
import { prepareSchema } from "../scripts/prepare-schema.js";

/** The events schema compiled by AJV at run time, in the build's own settings but for `discriminator`. */
function runtimeValidator(discriminator: boolean): (value: unknown) => boolean {
  const schemaPath = fileURLToPath(import.meta.resolve("@acs-toolkit/schema/events.schema.json"));
  const ajv = createAjv(false, { discriminator });
  ajv.addSchema(prepareSchema(JSON.parse(readFileSync(schemaPath, "utf8")) as Record<string, unknown>, "fast"), "events");
  const validate = ajv.getSchema("events")!;
  return (value) => validate.call({}, value) as boolean;
}

export interface ValidatorBenchResult {
  events: number;
  megabytes: number;
  parse: { eventsPerSecond: number; megabytesPerSecond: number };
  validate: { eventsPerSecond: number; megabytesPerSecond: number };
  /**
   * The same schema compiled by AJV at run time: with
   * `discriminator: true` (a union's branch picked by `kind`, what the compiled code uses) and
   * without (each branch tried, `anyOf`).
   */
  runtime: { discriminator: { eventsPerSecond: number }; anyOf: { eventsPerSecond: number } };
  /** Validation time divided by parse time for the same events. */
  ratio: number;
}

const corpusDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../fixtures/openhands-recorded");

function realisticMix(): string[] {
  const corpus = readdirSync(corpusDir)
    .filter((f) => f.endsWith(".json"))
    .map((f) => JSON.stringify(JSON.parse(readFileSync(path.join(corpusDir, f), "utf8"))));
  const generated = Array.from({ length: 20 }, (_, seed) => exampleEvents({ seed }).map((e) => JSON.stringify(e))).flat();
  return [...corpus, ...generated];
}

/** Runs `fn` over every item until at least `minMs` have passed; returns ms per pass. */
function timePerPass<T>(items: T[], fn: (item: T) => unknown, minMs: number): number {
  let sink = 0;
  for (let i = 0; i < 3; i++) for (const item of items) if (fn(item)) sink++; // warm-up
  let passes = 0;
  const start = performance.now();
  let elapsed = 0;
  do {
    for (const item of items) if (fn(item)) sink++;
    passes++;
    elapsed = performance.now() - start;
  } while (elapsed < minMs);
  if (sink < 0) console.log(sink);
  return elapsed / passes;
}

export function benchValidator({ smoke = false } = {}): ValidatorBenchResult {
  const texts = realisticMix();
  const values = texts.map((t) => JSON.parse(t) as unknown);
  const invalid = values.map((v) => validateEvent(v)).filter((r) => !r.ok);
  if (invalid.length) throw new Error(`the benchmark mix has ${invalid.length} invalid events`);
  const bytes = texts.reduce((sum, t) => sum + Buffer.byteLength(t), 0);
  const minMs = smoke ? 50 : 2000;
  // Interleave the two measurements so that drift in machine load touches both.
  let parseMs = 0;
  let validateMs = 0;
  let discriminatorMs = 0;
  let anyOfMs = 0;
  const withDiscriminator = runtimeValidator(true);
  const withAnyOf = runtimeValidator(false);
  for (const [name, validate] of [["discriminator", withDiscriminator], ["anyOf", withAnyOf]] as const) {
    const refused = values.filter((v) => !validate(v)).length;
    if (refused) throw new Error(`the run-time validator (${name}) refuses ${refused} events of the mix`);
  }
  // One round untimed first: the compiled validator is one large function that V8 takes seconds
  // of calls to optimise (a three-pass warm-up measured it 2–7× slower than it runs after).
  const rounds = smoke ? 1 : 3;
  for (let round = smoke ? 0 : -1; round < rounds; round++) {
    if (round === -1) {
      for (const fn of [() => texts.forEach((t) => JSON.parse(t)), () => values.forEach((v) => validateEvent(v)), () => values.forEach(withDiscriminator), () => values.forEach(withAnyOf)]) {
        for (const start = performance.now(); performance.now() - start < minMs; ) fn();
      }
      continue;
    }
    parseMs += timePerPass(texts, (t) => JSON.parse(t), minMs);
    validateMs += timePerPass(values, (v) => validateEvent(v).ok, minMs);
    discriminatorMs += timePerPass(values, withDiscriminator, minMs);
    anyOfMs += timePerPass(values, withAnyOf, minMs);
  }
  parseMs /= rounds;
  validateMs /= rounds;
  discriminatorMs /= rounds;
  anyOfMs /= rounds;
  const rate = (ms: number) => ({
    eventsPerSecond: Math.round((texts.length / ms) * 1000),
    megabytesPerSecond: Number(((bytes / 1e6 / ms) * 1000).toFixed(1)),
  });
  return {
    events: texts.length,
    megabytes: Number((bytes / 1e6).toFixed(3)),
    parse: rate(parseMs),
    validate: rate(validateMs),
    runtime: { discriminator: { eventsPerSecond: rate(discriminatorMs).eventsPerSecond }, anyOf: { eventsPerSecond: rate(anyOfMs).eventsPerSecond } },
    ratio: Number((validateMs / parseMs).toFixed(3)),
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const result = benchValidator({ smoke: process.argv.includes("--smoke") });
  console.log(`validator: ${result.events} events, ${result.megabytes} MB per pass`);
  console.log(`  JSON.parse      ${result.parse.eventsPerSecond.toLocaleString("en")} events/s  ${result.parse.megabytesPerSecond} MB/s`);
  console.log(`  validateEvent   ${result.validate.eventsPerSecond.toLocaleString("en")} events/s  ${result.validate.megabytesPerSecond} MB/s`);
  console.log(`  AJV at run time, discriminator: true   ${result.runtime.discriminator.eventsPerSecond.toLocaleString("en")} events/s`);
  console.log(`  AJV at run time, anyOf (no discriminator)   ${result.runtime.anyOf.eventsPerSecond.toLocaleString("en")} events/s`);
  console.log(`  ratio validate/parse = ${result.ratio} (target ≤ 1.0)`);
  // Conventions: every figure also goes, as a JSON line, to the file named by ACS_BENCH_RESULTS.
  if (process.env.ACS_BENCH_RESULTS) {
    const figure = {
      suite: "validator",
      // Smoke figures (one short round, JIT still cold) are labelled as such: they keep CI honest, not fast.
      name: `validateEvent vs JSON.parse${process.argv.includes("--smoke") ? " (smoke)" : ""}`,
      value: result.validate.eventsPerSecond,
      unit: "events/s",
      peer: { name: "JSON.parse", value: result.parse.eventsPerSecond, unit: "events/s" },
      ratio: result.ratio,
      target: "ratio ≤ 1.0",
      met: result.ratio <= 1,
    };
    const smoke = process.argv.includes("--smoke") ? " (smoke)" : "";
    const runtime = result.runtime.discriminator.eventsPerSecond;
    const modes = [
      {
        suite: "validator",
        name: `validateEvent (compiled, discriminator) vs AJV at run time with discriminator: true${smoke}`,
        value: result.validate.eventsPerSecond,
        unit: "events/s",
        peer: { name: "AJV at run time, discriminator: true", value: runtime, unit: "events/s" },
        ratio: Number((result.validate.eventsPerSecond / runtime).toFixed(2)),
      },
      {
        suite: "validator",
        name: `discriminator mode vs anyOf (AJV at run time)${smoke}`,
        value: runtime,
        unit: "events/s",
        peer: { name: "AJV at run time, anyOf", value: result.runtime.anyOf.eventsPerSecond, unit: "events/s" },
        ratio: Number((runtime / result.runtime.anyOf.eventsPerSecond).toFixed(2)),
      },
    ];
    appendFileSync(process.env.ACS_BENCH_RESULTS, [figure, ...modes].map((f) => `${JSON.stringify(f)}\n`).join(""));
  }
}
