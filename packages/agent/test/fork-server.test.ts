import { execFileSync } from "node:child_process";
import { once } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import { ForkServer, type SpawnedProcess } from "../src/index.js";
import { SANDBOX_PATH as PATH } from "../src/sandbox/sandbox.js";

let server: ForkServer;
afterEach(() => server?.close());

const command = (script: string) => ({ command: "sh", args: ["-c", script], env: { PATH }, cwd: "/" });
/** Everything a stream says until it ends. */
async function text(stream: NodeJS.ReadableStream): Promise<string> {
  let out = "";
  for await (const chunk of stream) out += String(chunk);
  return out;
}
const exit = (child: SpawnedProcess) => new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on("exit", (code, signal) => resolve([code, signal])));

describe("ForkServer", () => {
  it("relays stdin, stdout, stderr and the exit status", async () => {
    server = new ForkServer();
    const child = await server.spawn(command("echo out; echo err >&2; read line; echo \"got $line\"; exit 3"));
    const status = exit(child);
    const [out, err] = [text(child.stdout), text(child.stderr)];
    child.stdin.write("hello\n");
    expect(await status).toEqual([3, null]);
    expect(await out).toBe("out\ngot hello\n");
    expect(await err).toBe("err\n");
  });

  it("ends a process's input when its stdin is ended", async () => {
    server = new ForkServer();
    const child = await server.spawn(command("cat; echo done"));
    const [status, out] = [exit(child), text(child.stdout)];
    child.stdin.write("typed\n");
    child.stdin.end();
    expect(await status).toEqual([0, null]);
    expect(await out).toBe("typed\ndone\n");
  });

  it("passes a flood of output whole, reading only as fast as it is taken, output after the exit included", async () => {
    server = new ForkServer();
    // Output still in flight when the process exits must arrive (and be acknowledged) all the same.
    for (let round = 0; round < 5; round++) {
      const child = await server.spawn(command("head -c 30000000 /dev/zero"));
      let bytes = 0;
      child.stdout.on("data", (chunk: Buffer) => (bytes += chunk.length));
      await once(child.stdout, "end");
      expect(bytes).toBe(30_000_000);
    }
  });

  it("output written after the process exited (by a job it left) still arrives, and the streams end", async () => {
    server = new ForkServer();
    const child = await server.spawn(command("(sleep 0.3; echo late; echo later >&2) & echo early"));
    const status = exit(child);
    const [out, err] = [text(child.stdout), text(child.stderr)];
    expect(await status).toEqual([0, null]);
    expect(await out).toBe("early\nlate\n");
    expect(await err).toBe("later\n");
  });

  it("kills on request, and reports a command that cannot start", async () => {
    server = new ForkServer();
    const child = await server.spawn(command("sleep 1000"));
    const status = exit(child);
    expect(child.kill("SIGKILL")).toBe(true);
    expect(await status).toEqual([null, "SIGKILL"]);
    const missing = await server.spawn({ command: "/nonexistent/program", args: [], env: { PATH }, cwd: "/" });
    const error = await new Promise<NodeJS.ErrnoException>((resolve) => missing.on("error", resolve));
    expect(error.code).toBe("ENOENT");
  });

  it("when it is closed, every process it started is killed; a new spawn starts it again", async () => {
    server = new ForkServer();
    const marker = String(800_000 + Math.floor(Math.random() * 99_999));
    const child = await server.spawn(command(`exec sleep ${marker}`));
    const status = exit(child);
    server.close();
    expect(await status).toEqual([null, "SIGKILL"]);
    await expect.poll(() => execFileSync("ps", ["-eo", "args"], { encoding: "utf8" }).includes(`sleep ${marker}`), { timeout: 10_000, interval: 50 }).toBe(false);
    const again = await server.spawn(command("echo again"));
    expect(await text(again.stdout)).toBe("again\n");
  });
});
