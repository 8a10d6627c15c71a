/** The `acs-server` bin's command line: --version, and a usage error is one line with exit code 2. */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const cli = new URL("../dist/cli.js", import.meta.url).pathname;
const run = (...args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: "utf8", env: { PATH: process.env.PATH }, timeout: 20_000 });

describe("acs-server", () => {
  it("--version (and -v) prints the package's version", () => {
    const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };
    expect(run("--version")).toMatchObject({ status: 0, stdout: `${version}\n`, stderr: "" });
    expect(run("-v")).toMatchObject({ status: 0, stdout: `${version}\n` });
  });

  it.each([
    [["--prot", "3000"], "unknown option --prot (did you mean --port?)"],
    [["--cors-orign", "*"], "unknown option --cors-orign (did you mean --cors-origin?)"],
    [["--port", "abc"], '--port must be a whole number, got "abc"'],
    [["--port"], "option --port needs a value"],
  ])("%j: one line on standard error, exit code 2, no help dump", (args, message) => {
    expect(run(...args)).toMatchObject({ status: 2, stdout: "", stderr: `acs-server: ${message}; see acs-server --help\n` });
  });
});
