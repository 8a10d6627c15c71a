#!/usr/bin/env node
/**
 * Proves that the turbo cache cannot replay a stale pass (CI gate, after the build).
 *
 * 1. Inputs: for each probe file, the test tasks that read it are found from the source (a package
 *    whose files mention the file's folder by a path that leaves the package, its owner, or a direct
 *    dependent for a `src/` probe), the file is edited harmlessly, and every one of those tasks must
 *    get a new hash from `turbo run test --dry=json` (which runs nothing). Files are always restored.
 * 2. Outputs: a cache hit of the validator's build restores everything: with its outputs deleted,
 *    the build must be a FULL TURBO hit after which a dependent package imports and runs it.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const turbo = path.join(root, "node_modules/.bin/turbo");
const env = { ...process.env, TURBO_TELEMETRY_DISABLED: "1", FORCE_COLOR: "0", NO_COLOR: "1" };
const run = (args, options = {}) => execFileSync(turbo, args, { cwd: root, env, encoding: "utf8", maxBuffer: 64 << 20, ...options });

const FIXTURES = /(\.\.\/){2,}fixtures\/|["']fixtures\/openhands-/; // climbs out of the package, or is relative to the root
/**
 * file: the file edited. readers: a pattern of how another package's files reach it.
 * owner: the package holding the file. dependents: a source file, so every package that depends on
 * the owner (through its build, `^build`) must see it.
 */
const PROBES = [
  { file: "packages/server/test/support/harness.ts", owner: "packages/server", readers: /server\/test\/support\// },
  { file: "packages/test-kit/src/trajectory.ts", owner: "packages/test-kit", dependents: true },
  { file: "fixtures/openhands-recorded/conversation-2026-02-05.jsonl", readers: FIXTURES },
  { file: "fixtures/openhands-releases/README.md", readers: FIXTURES },
  { file: "spec/openapi.yaml", readers: /["'](\.\.\/)*spec(["']\)|\/)/ },
  { file: "packages/validator/src/pointer.ts", owner: "packages/validator", dependents: true },
];

/** The test tasks: id → { hash, dir (relative to the root), name }. */
function testTasks() {
  const dry = JSON.parse(run(["run", "test", "--dry=json"]));
  return new Map(dry.tasks.filter((t) => t.task === "test").map((t) => [t.taskId, { hash: t.hash, dir: t.directory, name: t.package }]));
}

/** The text of a package's tracked source files (not its build output, which git ignores). */
function sources(dir) {
  return execFileSync("git", ["ls-files", "--", dir], { cwd: root, encoding: "utf8" })
    .split("\n")
    .filter((file) => /\.(c|m)?[jt]sx?$/.test(file) || file.endsWith("vitest.config.ts"))
    .map((file) => readFileSync(path.join(root, file), "utf8"));
}

function manifest(dir) {
  return JSON.parse(readFileSync(path.join(root, dir, "package.json"), "utf8"));
}

/** The test tasks that read `probe.file`, found from the source rather than from turbo.json. */
function readersOf(probe, tasks) {
  const ownerName = probe.owner && manifest(probe.owner).name;
  return [...tasks].filter(([, task]) => {
    if (task.dir === probe.owner) return true;
    if (probe.dependents) {
      const { dependencies = {}, devDependencies = {} } = manifest(task.dir);
      return ownerName in dependencies || ownerName in devDependencies;
    }
    return sources(task.dir).some((text) => probe.readers.test(text));
  }).map(([id]) => id);
}

function checkInputs() {
  const before = testTasks();
  const failures = [];
  for (const probe of PROBES) {
    const file = path.join(root, probe.file);
    const readers = readersOf(probe, before);
    if (readers.length === 0) failures.push(`${probe.file}: no test task reads it; the probe is out of date`);
    const original = readFileSync(file);
    let after;
    try {
      writeFileSync(file, Buffer.concat([original, Buffer.from(/\.[cm]?[jt]s$/.test(file) ? "\n// turbo input probe\n" : "\n")]));
      after = testTasks();
    } finally {
      writeFileSync(file, original);
    }
    const stale = readers.filter((id) => after.get(id).hash === before.get(id).hash);
    console.log(`${probe.file}: read by ${readers.join(", ")}; ${stale.length ? `UNCHANGED hash: ${stale.join(", ")}` : "every hash changed"}`);
    for (const id of stale) failures.push(`${id} reads ${probe.file}, but its hash ignores an edit of it (declare it in the task's inputs)`);
  }
  return failures;
}

function checkValidatorRestore() {
  const filter = ["run", "build", "--filter=@acs-toolkit/validator", "--output-logs=hash-only"];
  run(filter);
  const pkg = path.join(root, "packages/validator");
  for (const dir of ["dist", "generated"]) rmSync(path.join(pkg, dir), { recursive: true, force: true });
  const output = run(filter);
  const failures = [];
  if (!output.includes("FULL TURBO")) failures.push(`validator build: a second run with its outputs deleted is not a full cache hit:\n${output}`);
  for (const file of ["generated/validators-fast.js", "generated/validators-full.js", "dist/validators-fast.js", "dist/index.js"]) {
    if (!existsSync(path.join(pkg, file))) failures.push(`validator build: the cache hit did not restore ${file}`);
  }
  try {
    // A dependent package loads the restored build and runs a compiled validator.
    const code = 'const v = await import("@acs-toolkit/validator"); if (v.isEvent({}) !== false) throw new Error("isEvent({}) is not false");';
    execFileSync(process.execPath, ["--input-type=module", "-e", code], { cwd: path.join(root, "packages/server"), stdio: ["ignore", "inherit", "pipe"] });
    console.log("validator build: restored from the cache with its outputs deleted; @acs-toolkit/validator imports and validates");
  } catch (error) {
    failures.push(`validator build: importing it after the cache hit failed: ${error.stderr ?? error.message}`);
  }
  return failures;
}

// A handler keeps an interrupt from killing this process with a file edited: the synchronous probes
// (whose turbo call a terminal's Ctrl-C ends) restore their files first.
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(130));

const failures = [...checkInputs(), ...checkValidatorRestore()];
for (const failure of failures) console.error(`FAIL ${failure}`);
process.exit(failures.length ? 1 : 0);
