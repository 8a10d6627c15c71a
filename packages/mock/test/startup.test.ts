/**
 * What a start of the built `acs-mock` loads: not the modules it does not use. An ES import of one
 * is refused by a module resolution hook in the child process, so that loading it fails the start;
 * the CommonJS modules it loaded are listed when it exits (no timing is asserted: what is measured
 * is in bench/run.ts).
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const cli = fileURLToPath(new URL("../dist/cli.js", import.meta.url));

/** A hook (run by `node --import`) that makes resolving any of `refused` throw. */
function refusing(refused: readonly string[]): string {
  const hooks = `const refused = ${JSON.stringify(refused)};
export async function resolve(specifier, context, next) {
  if (refused.some((name) => specifier === name || specifier.startsWith(name + "/"))) throw new Error("refused to load " + specifier);
  return next(specifier, context);
}`;
  const register = `import { createRequire, register } from "node:module";
register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});
const loaded = createRequire("/").cache;
process.on("exit", () => process.stderr.write("\\nloaded: " + JSON.stringify(Object.keys(loaded)) + "\\n"));`;
  return `data:text/javascript,${encodeURIComponent(register)}`;
}

/** Starts the bin under the hook; resolves with its output once it serves (or rejects with it). */
function startRefusing(refused: readonly string[]): Promise<string> {
  const child = spawn(process.execPath, ["--import", refusing(refused), cli, "--port", "0", "--scenario", "happy", "--speed", "instant"], { stdio: ["ignore", "pipe", "pipe"] });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", async (chunk) => {
      out += chunk;
      if (!out.includes("Ctrl-C stops it.")) return;
      const url = /on (http:\/\/\S+)/.exec(out)![1]!;
      const id = /happy\s+([0-9a-f-]{36})/.exec(out)![1]!;
      const page = await fetch(`${url}/api/conversations/${id}/events/search?limit=2`);
      out += `\nsearch: ${page.status}`;
      child.kill("SIGTERM");
    });
    child.stderr.on("data", (chunk) => (out += chunk));
    child.once("close", (code) => (code === 0 && out.includes("search: 200") ? resolve(out) : reject(new Error(`exited ${code}: ${out}`))));
  });
}

describe("acs-mock start", () => {
  it("does not load the LLM agent of @acs-toolkit/agent (the reference server's --runtime agent)", async () => {
    expect(await startRefusing(["@acs-toolkit/agent"])).toContain("search: 200");
  });

  it("does not load the PostgreSQL driver (the reference server's PostgreSQL store)", async () => {
    expect(await startRefusing(["pg", "pg-copy-streams"])).toContain("search: 200");
  });

  it("does not load Prism's logger (prism-core's entry: the mock uses its factory only)", async () => {
    const out = await startRefusing([]);
    const loaded = JSON.parse(/^loaded: (.*)$/m.exec(out)![1]!) as string[];
    expect(loaded.some((file) => file.includes("prism-core") && file.endsWith("factory.js"))).toBe(true);
    expect(loaded.filter((file) => file.includes("prism-core") && /[/\\](index|logger)\.js$/.test(file))).toEqual([]);
  });
});
