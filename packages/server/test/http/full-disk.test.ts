/**
 * A full disk, for real: the built server runs in a private mount namespace
 * (`unshare -Urm`) whose data directory is a tmpfs of a few MiB; the test fills it through
 * /proc/<pid>/root. Writes are answered 507 naming the cause, /health reports that writes fail,
 * reads keep working, nothing is left half-written, and once space is freed writes work again
 * without a restart.
 */
import { spawnSync } from "node:child_process";
import { mkdtemp, readdir, rm, statfs, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { exampleEvents } from "@acs-toolkit/schema/examples";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { KEY } from "../support/harness.js";
import { exited, spawnServer, type ServerProcess } from "../support/process.js";

const TMPFS_BYTES = 8 * 1024 * 1024;
const canMountTmpfs = spawnSync("unshare", ["-Urm", "sh", "-c", `d=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs "$d"`]).status === 0;

const headers = { "X-Session-API-Key": KEY, "Content-Type": "application/json" };
/** A replay of `copies` × the example trajectory, every id fresh. */
const replay = (copies: number) =>
  Array.from({ length: copies }, (_, i) => exampleEvents({ seed: 1000 + i, start: new Date(Date.UTC(2026, 0, 1 + i)) }))
    .flat()
    .map((e) => JSON.stringify(e))
    .join("\n");

describe.skipIf(!canMountTmpfs)("a full disk (a tmpfs in a private mount namespace)", () => {
  let dataDir: string;
  let server: ServerProcess;
  let inside: string;
  let before: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "acs-full-disk-"));
    server = await spawnServer(dataDir, {
      wrapper: ["unshare", "-Urm", "sh", "-c", `mount -t tmpfs -o size=${TMPFS_BYTES} tmpfs "$0" && exec "$@"`, dataDir],
    });
    inside = `/proc/${server.process.pid}/root${dataDir}`;
    const created = await fetch(`${server.url}/api/conversations`, { method: "POST", headers, body: JSON.stringify({ replay_json: replay(1) }) });
    expect(created.status).toBe(200);
    before = ((await created.json()) as { conversation_id: string }).conversation_id;
    // Fill the file system to the last block.
    const { bavail, bsize } = await statfs(inside);
    await writeFile(path.join(inside, "ballast"), Buffer.alloc(Number(bavail) * Number(bsize))).catch(() => {});
  });
  afterAll(async () => {
    server?.process.kill("SIGKILL");
    if (server) await exited(server.process);
    await rm(dataDir, { recursive: true, force: true });
  });

  const expect507 = async (response: Response) => {
    expect(response.status).toBe(507);
    const body = (await response.json()) as { detail: string };
    expect(body.detail).toMatch(/disk is full/);
    expect(body.detail).toMatch(/SQLITE_FULL|ENOSPC/);
  };

  it("a replay is a 507 naming the cause, and no part of it is stored", async () => {
    const id = crypto.randomUUID();
    await expect507(await fetch(`${server.url}/api/conversations`, { method: "POST", headers, body: JSON.stringify({ conversation_id: id, replay_json: replay(40) }) }));
    expect((await fetch(`${server.url}/api/conversations/${id}`, { headers })).status).toBe(404);
  });

  it("an event batch is a 507 naming the cause, and no part of it is stored", async () => {
    const count = async () => ((await (await fetch(`${server.url}/api/conversations/${before}`, { headers })).json()) as { event_count: number }).event_count;
    const stored = await count();
    // 3,200 events not in the conversation (seeds of their own).
    const batch = Array.from({ length: 40 }, (_, i) => exampleEvents({ seed: 5000 + i, start: new Date(Date.UTC(2027, 0, 1 + i)) })).flat().map((e) => JSON.stringify(e)).join("\n");
    await expect507(await fetch(`${server.url}/api/conversations/${before}/events/batch`, { method: "POST", headers: { ...headers, "Content-Type": "application/x-ndjson" }, body: batch }));
    expect(await count()).toBe(stored);
  });

  it("settings and a user message are 507s too", async () => {
    await expect507(await fetch(`${server.url}/api/settings`, { method: "POST", headers, body: JSON.stringify({ language: "x".repeat(200_000) }) }));
    const message = { role: "user", content: [{ type: "text", text: "y".repeat(300_000) }] };
    await expect507(await fetch(`${server.url}/api/conversations/${before}/events`, { method: "POST", headers, body: JSON.stringify(message) }));
  });

  it("an upload is a 507 and leaves no file behind", async () => {
    const form = new FormData();
    form.append("files", new Blob([new Uint8Array(512 * 1024)]), "big.bin");
    await expect507(await fetch(`${server.url}/api/conversations/${before}/upload-files`, { method: "POST", headers: { "X-Session-API-Key": KEY }, body: form }));
    expect(await readdir(path.join(inside, "uploads", before)).catch(() => [])).toEqual([]);
  });

  it("a message over the live channel gets a ServerErrorEvent naming the cause", async () => {
    const ws = new WebSocket(`${server.url.replace("http", "ws")}/sockets/events/${before}`, { headers: { "X-Session-API-Key": KEY } });
    type Frame = { kind?: string; code?: string; detail?: string };
    const error = new Promise<Frame>((resolve) =>
      ws.on("message", (data) => {
        const frame = JSON.parse(String(data));
        if (frame.kind === "ServerErrorEvent") resolve(frame);
        else if (frame.key === "full_state") ws.send(JSON.stringify({ role: "user", content: [{ type: "text", text: "z".repeat(300_000) }] }));
      }),
    );
    const frame = await error;
    ws.close();
    expect(frame).toMatchObject({ code: "InsufficientStorage", detail: expect.stringMatching(/disk is full/) });
  });

  it("/health reports that writes fail; reads keep working", async () => {
    const health = await fetch(`${server.url}/health`);
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({ status: "unavailable", writes: "failing", detail: expect.stringMatching(/disk is full/) });
    const page = await fetch(`${server.url}/api/conversations/${before}/events/search`, { headers });
    expect(page.status).toBe(200);
    expect(((await page.json()) as { items: unknown[] }).items.length).toBeGreaterThan(0);
  });

  it("once space is freed, /health recovers and writes work, without a restart", async () => {
    await rm(path.join(inside, "ballast"));
    const health = await fetch(`${server.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: "ok", writes: "ok" });
    // A small replay: what the failed writes left in the WAL (its size depends on when the
    // checkpoint thread last ran) still takes part of the 8 MiB, so a large one could fill it again.
    const id = crypto.randomUUID();
    const created = await fetch(`${server.url}/api/conversations`, { method: "POST", headers, body: JSON.stringify({ conversation_id: id, replay_json: replay(4) }) });
    expect(created.status).toBe(200);
    const info = (await (await fetch(`${server.url}/api/conversations/${id}`, { headers })).json()) as { event_count: number };
    expect(info.event_count).toBe(4 * exampleEvents().length);
    expect(server.process.exitCode).toBeNull();
  });
});
