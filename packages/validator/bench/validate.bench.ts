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

export interface ValidatorBenchResult {
  events: number;
  megabytes: number;
  parse: { eventsPerSecond: number; megabytesPerSecond: number };
  validate: { eventsPerSecond: number; megabytesPerSecond: number };
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
  const rounds = smoke ? 1 : 3;
  for (let round = 0; round < rounds; round++) {
    parseMs += timePerPass(texts, (t) => JSON.parse(t), minMs);
    validateMs += timePerPass(values, (v) => validateEvent(v).ok, minMs);
  }
  parseMs /= rounds;
  validateMs /= rounds;
  const rate = (ms: number) => ({
    eventsPerSecond: Math.round((texts.length / ms) * 1000),
    megabytesPerSecond: Number(((bytes / 1e6 / ms) * 1000).toFixed(1)),
  });
  return { events: texts.length, megabytes: Number((bytes / 1e6).toFixed(3)), parse: rate(parseMs), validate: rate(validateMs), ratio: Number((validateMs / parseMs).toFixed(3)) };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const result = benchValidator({ smoke: process.argv.includes("--smoke") });
  console.log(`validator: ${result.events} events, ${result.megabytes} MB per pass`);
  console.log(`  JSON.parse      ${result.parse.eventsPerSecond.toLocaleString("en")} events/s  ${result.parse.megabytesPerSecond} MB/s`);
  console.log(`  validateEvent   ${result.validate.eventsPerSecond.toLocaleString("en")} events/s  ${result.validate.megabytesPerSecond} MB/s`);
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
    appendFileSync(process.env.ACS_BENCH_RESULTS, `${JSON.stringify(figure)}\n`);
  }
}
