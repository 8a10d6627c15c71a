/**
 * `pnpm bench` for a new user's first commands, on a fresh clone of this repository's HEAD (a local
 * `git clone`: no node_modules, no dist, no turbo cache; pnpm's package store as this machine has
 * it): `pnpm start` until /health answers (target ≤ 60 s, with no warning printed), then
 * `pnpm start --help` with the build current (≤ 2 s), then `pnpm mock` until /health (≤ 20 s).
 * Each is spawned as a user runs it, timed from the spawn. `--smoke` is the same run: there is no
 * shorter first start.
 *
 * With ACS_BENCH_RESULTS set, the figures are appended there as JSON lines (suite "first run").
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const LIMIT_MS = 300_000;

interface Figure {
  suite: string;
  name: string;
  value: number;
  unit: string;
  target?: string;
  met?: boolean;
}
const figures: Figure[] = [];
const record = (figure: Omit<Figure, "suite">) => {
  figures.push({ suite: "first run", ...figure });
  console.log(`  ${figure.name}: ${figure.value} ${figure.unit}${figure.target ? ` (target ${figure.target}: ${figure.met ? "met" : "NOT met"})` : ""}`);
};

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Spawns `pnpm <args>` in the clone; resolves with the time until /health answered on `port`, and the output so far. */
async function untilHealthy(cwd: string, args: string[], port: number): Promise<{ ms: number; output: () => string; child: ChildProcess }> {
  const started = performance.now();
  const child = spawn("pnpm", args, { cwd, env: { ...process.env, FORCE_COLOR: "0", CI: "" }, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  let exited = false;
  child.on("exit", () => (exited = true));
  for (;;) {
    if (exited) throw new Error(`pnpm ${args.join(" ")} exited before /health answered:\n${output.slice(-3000)}`);
    if (performance.now() - started > LIMIT_MS) throw new Error(`pnpm ${args.join(" ")}: no /health within ${LIMIT_MS / 1000} s:\n${output.slice(-3000)}`);
    try {
      const response = await fetch(`http://127.0.0.1:${port}/health`);
      if (response.ok) return { ms: performance.now() - started, output: () => output, child };
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  process.kill(-child.pid!, "SIGTERM"); // the whole group: pnpm, the runner script and the server
  await exited;
}

/** Warnings a new user would read: pnpm's WARN lines, failed bin links, the build's warnings. */
const warnings = (output: string) => output.split("\n").filter((line) => /\bWARN\b|warning|Failed to create bin/i.test(line));

const clone = mkdtempSync(path.join(tmpdir(), "acs-first-run-"));
try {
  console.log(`first run: a fresh clone of ${repo} (HEAD) in ${clone}\n`);
  const cloned = spawnSync("git", ["clone", "--quiet", "--no-hardlinks", repo, clone], { encoding: "utf8" });
  if (cloned.status !== 0) throw new Error(`git clone failed: ${cloned.stderr}`);
  const dataDir = path.join(clone, ".bench-data");

  const serverPort = await freePort();
  const start = await untilHealthy(clone, ["start", "--port", String(serverPort), "--data-dir", dataDir], serverPort);
  const startWarnings = warnings(start.output());
  await stop(start.child);
  record({ name: "pnpm start on a fresh clone: spawn to /health", value: Math.round(start.ms / 100) / 10, unit: "s", target: "≤ 60 s", met: start.ms <= 60_000 });
  record({ name: "pnpm start on a fresh clone: warning lines printed", value: startWarnings.length, unit: "lines", target: "none", met: startWarnings.length === 0 });
  for (const line of startWarnings.slice(0, 10)) console.log(`    ${line}`);

  const helpStarted = performance.now();
  const help = spawnSync("pnpm", ["start", "--help"], { cwd: clone, encoding: "utf8" });
  const helpMs = performance.now() - helpStarted;
  if (help.status !== 0 || !/--port/.test(help.stdout)) throw new Error(`pnpm start --help failed (${help.status}):\n${help.stdout}${help.stderr}`);
  record({ name: "pnpm start --help, the build current", value: Math.round(helpMs), unit: "ms", target: "≤ 2000 ms", met: helpMs <= 2_000 });

  const mockPort = await freePort();
  const mock = await untilHealthy(clone, ["mock", "--port", String(mockPort)], mockPort);
  await stop(mock.child);
  record({ name: "pnpm mock after pnpm start: spawn to /health", value: Math.round(mock.ms / 100) / 10, unit: "s", target: "≤ 20 s", met: mock.ms <= 20_000 });
} finally {
  rmSync(clone, { recursive: true, force: true });
}
if (process.env.ACS_BENCH_RESULTS) for (const figure of figures) appendFileSync(process.env.ACS_BENCH_RESULTS, JSON.stringify(figure) + "\n");
