/**
 * The packed tarballs installed into fresh projects, as a new user gets them (pnpm with hoisting
 * off, so that a package sees nothing but its own dependencies; third-party packages from the
 * registry, through the machine's pnpm store):
 *
 * - a Node project with every package: a consumer compiles with `strict` (and `skipLibCheck` off)
 *   as an ES module under bundler, node16 and nodenext and as CommonJS under node16 and nodenext,
 *   with @types/node and nothing else (node10 resolution, typesVersions included, is checked by
 *   @arethetypeswrong/cli in tarballs.test.ts); the MSW handlers compile too (msw installed); every
 *   entry and subpath loads with `import` and with `require`; the four bins answer `--version`; no
 *   dependency runs an install script but better-sqlite3's native build (pnpm skips it: nothing
 *   here opens a database).
 * - a browser project with the client and the schema only: a frontend consumer compiles with the
 *   DOM library and no @types/node; node_modules stays within its budget; `validate: true` without
 *   the validator fails with a clear error.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { CLIENT_FOOTPRINT_BUDGET } from "../src/budgets.js";
import { publicPackages, repoDir } from "../src/packages.js";

const run = promisify(execFile);
const fixtures = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../fixtures");
const tsc = path.join(repoDir, "node_modules/typescript/bin/tsc");
const packages = publicPackages();
const work = mkdtempSync(path.join(tmpdir(), "acs-consumers-"));
const nodeProject = path.join(work, "node");
const browserProject = path.join(work, "browser");

/**
 * A fresh project depending on `names`, from their tarballs (`within`: every @acs-toolkit package
 * the install may need, overridden to its tarball since none is on the registry).
 */
async function install(dir: string, names: string[], extra: Record<string, string>, within: string[] = names): Promise<void> {
  const tarballs = inject("tarballs");
  const spec = (name: string) => `file:${tarballs[name]}`;
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, "package.json"),
    JSON.stringify({
      name: `acs-consumer-${path.basename(dir)}`,
      private: true,
      type: "module",
      dependencies: { ...Object.fromEntries(names.map((name) => [name, spec(name)])), ...extra },
      pnpm: { overrides: Object.fromEntries(within.map((name) => [name, spec(name)])) },
    }),
  );
  // hoist=false: no package sees another's dependencies (what a strict consumer gets).
  writeFileSync(path.join(dir, ".npmrc"), "hoist=false\nprefer-offline=true\nauto-install-peers=false\n");
  await run("pnpm", ["install", "--ignore-workspace"], { cwd: dir, env: { ...process.env, CI: "1" }, maxBuffer: 16 * 1024 * 1024 });
}

/** At most two compilers at once (two cores); each test awaits its own. */
let running = 0;
const waiting: Array<() => void> = [];
async function limited<T>(job: () => Promise<T>): Promise<T> {
  if (running >= 2) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await job();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

const compiled = new Map<string, Promise<string>>();
/** Starts (once) a compilation; resolves to tsc's diagnostics, "" when there are none. */
function compile(dir: string, compilerOptions: Record<string, unknown>, file: string): Promise<string> {
  const key = JSON.stringify([dir, compilerOptions, file]);
  if (!compiled.has(key)) compiled.set(key, limited(() => runTsc(dir, compilerOptions, file)));
  return compiled.get(key)!;
}

async function runTsc(dir: string, compilerOptions: Record<string, unknown>, file: string): Promise<string> {
  const name = `tsconfig.${file.replace(/\W/g, "-")}.${Object.values(compilerOptions).join("-").replace(/[^\w-]/g, "")}.json`;
  writeFileSync(
    path.join(dir, name),
    JSON.stringify({ compilerOptions: { strict: true, skipLibCheck: false, noEmit: true, target: "es2022", ...compilerOptions }, files: file.split(",") }),
  );
  return run(process.execPath, [tsc, "-p", name], { cwd: dir }).then(
    () => "",
    (error: { stdout?: string }) => error.stdout ?? String(error),
  );
}

/** Bytes under a directory, each file once (pnpm links the same file into several places). */
function diskBytes(dir: string, seen = new Set<string>()): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) total += diskBytes(full, seen);
    else if (!seen.has(realpathSync(full))) {
      seen.add(realpathSync(full));
      total += statSync(full).size;
    }
  }
  return total;
}

beforeAll(async () => {
  await Promise.all([
    install(nodeProject, packages.map((pkg) => pkg.name), { "@types/node": "20.19.43", msw: "2.15.0" }),
    install(browserProject, ["@acs-toolkit/client", "@acs-toolkit/schema"], {}),
  ]);
  for (const [format, type] of [["esm", "module"], ["cjs", "commonjs"]] as const) {
    mkdirSync(path.join(nodeProject, format));
    writeFileSync(path.join(nodeProject, format, "package.json"), JSON.stringify({ type }));
    for (const file of ["node-consumer.ts", "msw-consumer.ts"]) writeFileSync(path.join(nodeProject, format, file), readFileSync(path.join(fixtures, file)));
  }
  writeFileSync(path.join(browserProject, "consumer.ts"), readFileSync(path.join(fixtures, "browser-consumer.ts")));
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("a Node project with every package", () => {
  const node = { types: ["node"], lib: ["es2023"] };
  // Each compilation type-checks every declaration it reaches (msw's are the heaviest), so the MSW
  // handlers are compiled once, with the DOM library their types need, beside the nodenext consumer;
  // the other modes compile without the DOM library, which our declarations must not need.
  const modes = [
    ["ES module, bundler", { module: "esnext", moduleResolution: "bundler" }, "esm/node-consumer.ts"],
    ["ES module, node16", { module: "node16", moduleResolution: "node16" }, "esm/node-consumer.ts"],
    ["ES module, nodenext, with the MSW handlers (msw installed, the DOM library on)", { module: "nodenext", moduleResolution: "nodenext", lib: ["es2023", "dom", "dom.iterable"] }, "esm/node-consumer.ts,esm/msw-consumer.ts"],
    ["CommonJS, node16", { module: "node16", moduleResolution: "node16" }, "cjs/node-consumer.ts"],
    ["CommonJS, nodenext", { module: "nodenext", moduleResolution: "nodenext" }, "cjs/node-consumer.ts"],
  ] as const;
  const job = (options: object, files: string) => compile(nodeProject, { ...node, ...options }, files);
  // Every compilation starts as soon as the project is installed; the tests wait for theirs.
  beforeAll(() => {
    for (const [, options, files] of modes) void job(options, files);
  });

  it.each(modes)("compiles with strict as an %s, with no @types but node's", async (_name, options, files) => {
    expect(await job(options, files)).toBe("");
  });

  const entries = packages.flatMap((pkg) => {
    const manifest = JSON.parse(readFileSync(path.join(pkg.dir, "package.json"), "utf8")) as { exports: Record<string, unknown> };
    return Object.keys(manifest.exports)
      .filter((key) => !key.endsWith(".json"))
      .map((key) => `${pkg.name}${key.slice(1)}`);
  });

  it("loads every entry and subpath with import and with require (one module either way)", async () => {
    const list = JSON.stringify(entries);
    const esm = `for (const name of ${list}) { const m = await import(name); if (Object.keys(m).length === 0) throw new Error(name); } console.log("ok");`;
    const cjs = `const esm = ${list}.map((name) => require(name)); const again = require("@acs-toolkit/validator"); console.log(esm.every((m) => Object.keys(m).length > 0) && typeof again.validateEvent === "function" ? "ok" : "empty");`;
    expect((await run(process.execPath, ["--input-type=module", "-e", esm], { cwd: nodeProject })).stdout.trim()).toBe("ok");
    expect((await run(process.execPath, ["-e", cjs], { cwd: nodeProject })).stdout.trim()).toBe("ok");
    // The documents are JSON files shared by both entries.
    const documents = `import("@acs-toolkit/schema/documents").then((m) => console.log(m.openapiDocument === require("@acs-toolkit/schema/documents").openapiDocument, m.openapiDocument === require("@acs-toolkit/schema/openapi.json")))`;
    expect((await run(process.execPath, ["-e", documents], { cwd: nodeProject })).stdout.trim()).toBe("true true");
  });

  it.each(packages.flatMap((pkg) => Object.keys(pkg.bin).map((bin) => [bin, pkg.version] as const)))("%s --version", async (bin, version) => {
    expect(await run(path.join(nodeProject, "node_modules/.bin", bin), ["--version"], { cwd: nodeProject })).toEqual({ stdout: `${version}\n`, stderr: "" });
  });

  it("has the four bins", () => {
    expect(packages.flatMap((pkg) => Object.keys(pkg.bin)).sort()).toEqual(["acs-conformance", "acs-mock", "acs-server", "acs-validate"]);
  });

  it("runs no install script but better-sqlite3's native build (no telemetry postinstall)", () => {
    // pnpm records the packages whose build scripts it did not run (every one: none is allowed here).
    // msw is the project's own choice (the mock's optional peer), not a dependency of ours.
    const { ignoredBuilds } = JSON.parse(readFileSync(path.join(nodeProject, "node_modules/.modules.yaml"), "utf8")) as { ignoredBuilds: string[] };
    expect(ignoredBuilds.map((name) => name.replace(/(.)@.*$/, "$1")).filter((name) => name !== "msw")).toEqual(["better-sqlite3"]);
    const installed = readdirSync(path.join(nodeProject, "node_modules/.pnpm"));
    expect(installed.filter((name) => /^(@scarf|swagger-ui-dist|@types\+express)/.test(name))).toEqual([]);
  });
});

describe("a browser project with the client and the schema", () => {
  it("compiles a frontend with strict, the DOM library and no @types/node", async () => {
    expect(readdirSync(path.join(browserProject, "node_modules/.pnpm")).filter((name) => name.startsWith("@types+"))).toEqual([]);
    expect(await compile(browserProject, { module: "esnext", moduleResolution: "bundler", lib: ["es2023", "dom", "dom.iterable"], types: [] }, "consumer.ts")).toBe("");
  });

  it(`installs within ${CLIENT_FOOTPRINT_BUDGET / 1e6} MB of node_modules besides openapi-fetch and the schema`, () => {
    const store = path.join(browserProject, "node_modules/.pnpm");
    const sizes = Object.fromEntries(readdirSync(store).filter((name) => !name.startsWith(".") && name !== "node_modules" && name !== "lock.yaml").map((name) => [name, diskBytes(path.join(store, name))]));
    const counted = Object.entries(sizes).filter(([name]) => !/^(openapi-fetch|openapi-typescript-helpers|@acs-toolkit\+schema)@/.test(name));
    const total = counted.reduce((sum, [, bytes]) => sum + bytes, 0);
    console.log(`client footprint: ${total} bytes (${counted.map(([name, bytes]) => `${name} ${bytes}`).join(", ")}); all: ${JSON.stringify(sizes)}`);
    expect(Object.keys(sizes).some((name) => name.startsWith("@acs-toolkit+validator"))).toBe(false);
    expect(total).toBeLessThanOrEqual(CLIENT_FOOTPRINT_BUDGET);
  });

  it("validate: true without the validator fails with an error that says what to install", async () => {
    const script = `
      import { createClient } from "@acs-toolkit/client";
      const page = { items: [], next_page_id: null };
      const client = createClient({ baseUrl: "http://127.0.0.1:9", validate: true, fetch: async () => Response.json(page) });
      client.searchEvents("5df490d1-98e8-4dea-9ae7-7f36c59f8ed5").then(() => console.log("accepted"), (error) => console.log(error.message));`;
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: browserProject });
    expect(stdout).toMatch(/^validate: cannot load @acs-toolkit\/validator, the optional peer dependency that checks events: install it beside @acs-toolkit\/client \(npm install @acs-toolkit\/validator\), or leave validate off \(.*Cannot find package '@acs-toolkit\/validator'/);
  });
});
