/**
 * `pnpm fuzz [--count N] [--seed S] [--target server|mock|both] [--url URL --key KEY]`: fuzzes the
 * built server and/or mock (each started from its bin on a free port), or an implementation already
 * running at URL. Exits 1 when a case failed, printing its smallest reproduction.
 */
import { parseArgs } from "node:util";
import { formatReport, runFuzz } from "./run.js";
import { externalTarget, FUZZ_KEY, startTarget } from "./target.js";

const { values } = parseArgs({
  options: {
    count: { type: "string", default: "2000" },
    seed: { type: "string" },
    target: { type: "string", default: "server" },
    url: { type: "string" },
    key: { type: "string", default: FUZZ_KEY },
    timing: { type: "string", default: "fail" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  process.stdout.write("Usage: pnpm fuzz [--count N] [--seed S] [--target server|mock|both] [--url URL --key KEY] [--timing fail|count]\n");
  process.exit(0);
}
const count = Number(values.count);
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
if (!Number.isInteger(count) || count < 1 || !Number.isInteger(seed)) {
  process.stderr.write("fuzz: --count and --seed must be whole numbers\n");
  process.exit(2);
}
if (values.timing !== "fail" && values.timing !== "count") {
  process.stderr.write(`fuzz: --timing must be fail or count, got "${values.timing}"\n`);
  process.exit(2);
}
const timing = values.timing;
const kinds = values.url ? ["url"] : values.target === "both" ? ["server", "mock"] : [values.target!];
let failed = false;
for (const kind of kinds) {
  if (kind !== "url" && kind !== "server" && kind !== "mock") {
    process.stderr.write(`fuzz: --target must be server, mock or both, got "${kind}"\n`);
    process.exit(2);
  }
  const started = performance.now();
  const report = await runFuzz({
    count,
    seed,
    start: async () => (kind === "url" ? externalTarget(values.url!, values.key!) : startTarget(kind)),
    log: (line) => process.stdout.write(`${line}\n`),
    timing,
  });
  process.stdout.write(`${formatReport(report, kind === "url" ? values.url! : kind, timing)}\n  time: ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  failed ||= report.failure !== undefined;
}
process.exit(failed ? 1 : 0);
