/**
 * The data directory: every file the server writes is 0600 and every
 * folder 0700, also in a directory that existed with 0755 and whatever the umask; temporary upload
 * files left by a SIGKILL are removed at the next start.
 */
import { request } from "node:http";
import { chmod, mkdir, mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { exampleEvents } from "@acs-toolkit/schema/examples";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { KEY, startTestServer } from "../support/harness.js";
import { exited, spawnServer } from "../support/process.js";
import { BOUNDARY, MULTIPART_TYPE } from "../uploads/harness.js";

async function entriesUnder(dir: string): Promise<Array<{ path: string; mode: number; directory: boolean }>> {
  const out = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    out.push({ path: full, mode: (await stat(full)).mode & 0o777, directory: entry.isDirectory() });
    if (entry.isDirectory()) out.push(...(await entriesUnder(full)));
  }
  return out;
}

const octal = (mode: number) => `0${mode.toString(8)}`;

describe("file modes", () => {
  let dataDir: string;
  beforeAll(async () => void (dataDir = await mkdtemp(path.join(tmpdir(), "acs-modes-"))));
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it("files 0600 and folders 0700 in a data directory that exists with 0755, under umask 000", async () => {
    await chmod(dataDir, 0o755);
    const umask = process.umask(0);
    try {
      // No SESSION_API_KEY: the server generates its key file too.
      const t = await startTestServer([], { SESSION_API_KEY: "" }, dataDir);
      const key = t.server.keys.keys[0]!;
      const created = await t.call("POST", "/api/conversations", { key, json: { replay_json: JSON.stringify(exampleEvents()) } });
      expect(created.status, created.text).toBe(200);
      expect((await t.call("POST", "/api/settings", { key, json: { llm_api_key: "sk-x" } })).status).toBe(200);
      const form = new FormData();
      form.append("files", new Blob(["data"]), "notes.txt");
      const uploaded = await t.call("POST", `/api/conversations/${created.body.conversation_id}/upload-files`, { key, body: form });
      expect(uploaded.body.file_urls).toHaveLength(1);
      const entries = await entriesUnder(dataDir);
      expect(entries.map((e) => path.basename(e.path))).toEqual(expect.arrayContaining(["acs.sqlite", "acs.sqlite-wal", "acs.sqlite-shm", "secret.key", "session-api-key", "notes.txt"]));
      await t.close();
      const all = [{ path: dataDir, mode: (await stat(dataDir)).mode & 0o777, directory: true }, ...entries];
      expect(all.filter((e) => e.mode !== (e.directory ? 0o700 : 0o600)).map((e) => `${e.path} ${octal(e.mode)}`)).toEqual([]);
    } finally {
      process.umask(umask);
    }
  });
});

describe("temporary upload files after a SIGKILL", () => {
  let dataDir: string;
  beforeAll(async () => void (dataDir = await mkdtemp(path.join(tmpdir(), "acs-leftovers-"))));
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it("are removed at the next start; stored files stay", async () => {
    const first = await spawnServer(dataDir);
    const headers = { "X-Session-API-Key": KEY, "Content-Type": "application/json" };
    const { conversation_id: id } = (await (await fetch(`${first.url}/api/conversations`, { method: "POST", headers, body: "{}" })).json()) as { conversation_id: string };
    const folder = path.join(dataDir, "uploads", id);
    const kept = new FormData();
    kept.append("files", new Blob(["kept"]), "kept.txt");
    expect((await fetch(`${first.url}/api/conversations/${id}/upload-files`, { method: "POST", headers: { "X-Session-API-Key": KEY }, body: kept })).status).toBe(200);

    // An upload that never ends: its part is being written to a temporary file when the server dies.
    const upload = request(`${first.url}/api/conversations/${id}/upload-files`, { method: "POST", headers: { "X-Session-API-Key": KEY, "Content-Type": MULTIPART_TYPE } });
    upload.on("error", () => {});
    upload.write(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="files"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
    upload.write(Buffer.alloc(256 * 1024, 1));
    const temporary = () => readdir(folder).then((names) => names.filter((n) => n.endsWith(".part")));
    await vi.waitFor(async () => expect(await temporary()).toHaveLength(1), { timeout: 10_000, interval: 20 });
    first.process.kill("SIGKILL");
    await exited(first.process);
    // One more, as an older crash would have left in another conversation's folder.
    await mkdir(path.join(dataDir, "uploads", "00000000-0000-4000-8000-000000000001"), { recursive: true });
    await writeFile(path.join(dataDir, "uploads", "00000000-0000-4000-8000-000000000001", ".acs-upload-0123456789abcdef0123456789abcdef.part"), "x");

    const second = await spawnServer(dataDir);
    try {
      expect(await temporary()).toEqual([]);
      expect(await readdir(path.join(dataDir, "uploads", "00000000-0000-4000-8000-000000000001"))).toEqual([]);
      expect(await readdir(folder)).toEqual(["kept.txt"]);
    } finally {
      second.process.kill("SIGTERM");
      await exited(second.process);
    }
  });
});
