#!/usr/bin/env node
// `pnpm ui [--server] [--port N]`: OpenHands' own web UI (@openhands/agent-canvas, from npm, unchanged)
// on the mock, or with --server on the reference server running agents (SQLite in ./.data-ui). The backend listens on
// a free loopback port; the UI's own static server serves its build on --port (default 3001) and
// forwards the agent server's prefixes to the backend, with the session key injected into the page.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const useServer = args.includes("--server");
const portAt = args.indexOf("--port");
const uiPort = portAt >= 0 ? Number(args[portAt + 1]) : 3001;
if (!Number.isInteger(uiPort) || uiPort < 0 || uiPort > 65535) {
  console.error(`pnpm ui: --port takes a port number, got ${JSON.stringify(args[portAt + 1])}`);
  process.exit(2);
}

// The UI is a dev dependency of packages/compat, whose browser test drives it the same way.
const canvas = path.join(root, "packages", "compat", "node_modules", "@openhands", "agent-canvas");
if (!existsSync(path.join(canvas, "build", "index.html"))) {
  console.error(`pnpm ui: ${canvas} has no build/: run pnpm install first`);
  process.exit(1);
}

const key = process.env.SESSION_API_KEY?.split(",")[0] || randomBytes(16).toString("hex");
const children = [];
const stopAll = () => children.forEach((child) => child.kill("SIGTERM"));
process.on("SIGINT", stopAll).on("SIGTERM", stopAll);

/** Starts `argv` and resolves with the first match of `pattern` in its output (stdout or stderr). */
function startAndWait(label, argv, env, pattern) {
  const child = spawn(process.execPath, argv, { cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let seen = "";
    const read = (chunk) => {
      seen += chunk;
      const match = pattern.exec(seen);
      if (match) {
        child.stdout.off("data", read).pipe(process.stdout);
        child.stderr.off("data", read).pipe(process.stderr);
        resolve(match);
      }
    };
    child.stdout.setEncoding("utf8").on("data", read);
    child.stderr.setEncoding("utf8").on("data", read);
    child.on("exit", (code) => {
      reject(new Error(`${label} exited (${code}) before it was ready:\n${seen}`));
      stopAll();
      process.exitCode = code || 1;
    });
  });
}

const [, backend] = useServer
  ? await startAndWait("the reference server", ["packages/server/dist/cli.js", "--runtime", "agent", "--port", "0", "--data-dir", ".data-ui", "--log-level", "warn"], { SESSION_API_KEY: key }, /listening on (http:\/\/\S+)/)
  : await startAndWait("the mock", ["packages/mock/dist/cli.js", "--port", "0", "--key", key], {}, /mock on (http:\/\/\S+)/);

const routes = ["/api", "/sockets", "/server_info", "/health"].flatMap((prefix) => ["--route", `${prefix}=${backend}`]);
await startAndWait(
  "the UI's static server",
  [path.join(canvas, "scripts", "static-server.mjs"), "--port", String(uiPort), "--dir", path.join(canvas, "build"), ...routes, "--session-api-key", key],
  {},
  /listening on/,
);
console.log(`\nOpenHands' web UI on ${useServer ? "the reference server" : "the mock"}: http://127.0.0.1:${uiPort}/  (backend ${backend}, key ${key})`);
