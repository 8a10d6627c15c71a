#!/usr/bin/env node
// `pnpm start`, `pnpm mock` and `pnpm ui`: install when node_modules is behind the lockfile, build
// what the command runs, then run it. The build is JavaScript only (ACS_BUILD_DECLARATIONS=0: type
// declarations are half of the build's time and a running server does not read them) unless turbo
// already holds the full build, which `pnpm build` makes. When no input of the command's packages
// changed since its last build here, it runs at once: no pnpm install, no turbo.
//
// Usage: node scripts/run-built.mjs <server|mock|ui> [arguments of the command…]
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** What each command builds (turbo filters, with their workspace dependencies) and runs. */
const COMMANDS = {
  server: { packages: ["@acs-toolkit/server"], outputs: ["packages/server/dist/cli.js"], run: ["packages/server/dist/cli.js", "--runtime", "agent"] },
  mock: { packages: ["@acs-toolkit/mock"], outputs: ["packages/mock/dist/cli.js"], run: ["packages/mock/dist/cli.js"] },
  ui: { packages: ["@acs-toolkit/mock", "@acs-toolkit/server"], outputs: ["packages/mock/dist/cli.js", "packages/server/dist/cli.js"], run: ["scripts/ui.mjs"] },
};
/** Inputs of a package's build (turbo.json's build inputs), besides the root's below. */
const PACKAGE_INPUTS = ["src", "scripts", "generated", "tsup.config.ts", "tsconfig.json", "package.json"];
const ROOT_INPUTS = ["pnpm-lock.yaml", "tsconfig.base.json", "turbo.json", "tools/src/build"];

const [name, ...args] = process.argv.slice(2);
const command = COMMANDS[name];
if (!command) {
  console.error(`usage: node scripts/run-built.mjs <${Object.keys(COMMANDS).join("|")}> [arguments…]`);
  process.exit(2);
}

/** Workspace packages by name: their directory and the workspace packages they depend on. */
function workspacePackages() {
  const packages = new Map();
  for (const parent of ["packages", "examples"]) {
    const dir = path.join(root, parent);
    if (!existsSync(dir)) continue;
    for (const entry of readdirSync(dir)) {
      const file = path.join(dir, entry, "package.json");
      if (!existsSync(file)) continue;
      const manifest = JSON.parse(readFileSync(file, "utf8"));
      const deps = { ...manifest.dependencies, ...manifest.devDependencies };
      packages.set(manifest.name, { dir: path.join(dir, entry), deps: Object.keys(deps).filter((d) => String(deps[d]).startsWith("workspace:")) });
    }
  }
  return packages;
}

/** The directories of `names` and of every workspace package they depend on. */
function closure(packages, names) {
  const seen = new Set();
  const visit = (n) => {
    if (seen.has(n) || !packages.has(n)) return;
    seen.add(n);
    for (const dep of packages.get(n).deps) visit(dep);
  };
  names.forEach(visit);
  return [...seen].map((n) => packages.get(n).dir);
}

/** The newest modification time and the number of files under the inputs: a change, an added or a removed file moves it. */
function fingerprint(dirs) {
  let newest = 0;
  let files = 0;
  const walk = (at) => {
    let stat;
    try {
      stat = statSync(at);
    } catch {
      return;
    }
    if (stat.isDirectory()) {
      for (const entry of readdirSync(at)) if (entry !== "node_modules") walk(path.join(at, entry));
    } else {
      files++;
      newest = Math.max(newest, stat.mtimeMs);
    }
  };
  for (const dir of dirs) for (const input of PACKAGE_INPUTS) walk(path.join(dir, input));
  for (const input of ROOT_INPUTS) walk(path.join(root, input));
  return `${newest}:${files}`;
}

const packages = workspacePackages();
const dirs = closure(packages, command.packages);
const stampFile = path.join(root, "node_modules", ".cache", "acs-run-built", `${name}.json`);
const readStamp = () => {
  try {
    return JSON.parse(readFileSync(stampFile, "utf8")).fingerprint;
  } catch {
    return undefined;
  }
};
const outputsPresent = () => command.outputs.every((file) => existsSync(path.join(root, file)));
/** The environment of a build: with declarations (the variable unset, as `pnpm build` runs) or without ("0"). */
const buildEnv = (declarations) => {
  const env = { ...process.env };
  if (declarations) delete env.ACS_BUILD_DECLARATIONS;
  else env.ACS_BUILD_DECLARATIONS = "0";
  return env;
};

const run = (argv, env = process.env) => {
  const result = spawnSync(argv[0], argv.slice(1), { cwd: root, stdio: "inherit", env });
  if (result.status !== 0) process.exit(result.status ?? 1);
};

const current = existsSync(path.join(root, "node_modules", ".pnpm")) && outputsPresent() && readStamp() === fingerprint(dirs);
if (!current) {
  const installed = path.join(root, "node_modules", ".pnpm", "lock.yaml");
  const lockfile = path.join(root, "pnpm-lock.yaml");
  const manifests = [path.join(root, "package.json"), ...[...packages.values()].map((p) => path.join(p.dir, "package.json"))];
  if (!existsSync(installed) || manifests.concat(lockfile).some((file) => statSync(file).mtimeMs > statSync(installed).mtimeMs)) run(["pnpm", "install"]);

  const filters = command.packages.map((p) => `--filter=${p}...`);
  const turbo = ["pnpm", "exec", "turbo", "run", "build", ...filters, "--output-logs=errors-only"];
  // The full build when turbo holds it (a restore is quicker than any build); else JavaScript only.
  const dry = spawnSync("pnpm", ["exec", "turbo", "run", "build", ...filters, "--dry=json"], { cwd: root, encoding: "utf8", env: buildEnv(true) });
  let fullCached = false;
  try {
    fullCached = JSON.parse(dry.stdout).tasks.every((task) => task.cache?.status === "HIT");
  } catch {
    // No plan to read: build JavaScript only.
  }
  run(turbo, buildEnv(fullCached));
  mkdirSync(path.dirname(stampFile), { recursive: true });
  writeFileSync(stampFile, JSON.stringify({ fingerprint: fingerprint(dirs) }));
}

const child = spawn(process.execPath, [...command.run, ...args], { cwd: root, stdio: "inherit" });
// Ctrl-C reaches the child through the terminal's process group; the child decides when to stop.
process.on("SIGINT", () => {});
process.on("SIGTERM", () => child.kill("SIGTERM"));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
