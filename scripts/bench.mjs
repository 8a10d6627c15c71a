#!/usr/bin/env node
// `pnpm bench [--smoke]`: builds, then runs every package's benchmark one after another (so they do
// not compete for the two cores). --smoke runs each quickly, to keep them working in CI.
import { spawnSync } from "node:child_process";

const smoke = process.argv.includes("--smoke");
const run = (args) => {
  const result = spawnSync("pnpm", ["exec", "turbo", ...args], { stdio: "inherit", env: { ...process.env, TURBO_TELEMETRY_DISABLED: "1" } });
  if (result.status !== 0) process.exit(result.status ?? 1);
};
run(["run", "build"]);
run(["run", smoke ? "bench:smoke" : "bench", "--concurrency=1", "--output-logs=full"]);
