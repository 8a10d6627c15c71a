/**
 * A download racing the removal of its file (an upload rolled back between the route finding the
 * file and reading it): the answer is a 404, or a 200 with every byte — never
 * an uncaught ENOENT (which ended the process) and never a 200 cut short.
 *
 * The race is made certain, not waited for: node:fs's createReadStream is wrapped so that the file
 * is deleted the moment the route asks for a read stream, the latest point a removal can land.
 */
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { KEY, startTestServer, type TestServer } from "../support/harness.js";

let t: TestServer;
let conversationId: string;
const original = fs.createReadStream;

beforeAll(async () => {
  t = await startTestServer();
  conversationId = (await t.call("POST", "/api/conversations", { json: {} })).body.conversation_id;
});
afterAll(() => t.close());
afterEach(() => {
  fs.createReadStream = original;
  syncBuiltinESMExports();
});

async function upload(name: string, bytes: Buffer): Promise<string> {
  const form = new FormData();
  form.append("files", new Blob([new Uint8Array(bytes)]), name);
  const reply = await t.call("POST", `/api/conversations/${conversationId}/upload-files`, { body: form });
  expect(reply.body.file_urls).toHaveLength(1);
  return path.join(t.dataDir, "uploads", conversationId, name);
}

/** Deletes `file` when a read stream is next created (of any path), then creates it as asked. */
function removeOnNextRead(file: string): void {
  fs.createReadStream = ((...args: Parameters<typeof original>) => {
    fs.createReadStream = original;
    syncBuiltinESMExports();
    fs.rmSync(file, { force: true });
    return original(...args);
  }) as typeof original;
  syncBuiltinESMExports();
}

describe("a download whose file is removed while it is being served", () => {
  it.each([
    ["an empty file", 0],
    ["a small file", 1_000],
    ["a file of several chunks", 3 * 1024 * 1024 + 7],
  ])("%s: 404, or 200 with every byte", async (_name, size) => {
    const bytes = Buffer.alloc(size, 7);
    const name = `race-${size}.bin`;
    const file = await upload(name, bytes);
    removeOnNextRead(file);
    const response = await fetch(`${t.url}/api/conversations/${conversationId}/files/${name}`, { headers: { "X-Session-API-Key": KEY } });
    const body = Buffer.from(await response.arrayBuffer()); // rejects when the body is cut short
    if (response.status === 404) expect(JSON.parse(body.toString())).toEqual({ detail: `File not found: ${name}` });
    else {
      expect(response.status).toBe(200);
      expect(body.equals(bytes)).toBe(true);
    }
    expect(fs.existsSync(file)).toBe(false);
  });

  it("the server still answers", async () => {
    expect((await fetch(`${t.url}/health`)).status).toBe(200);
    expect(t.logs.filter((line) => line.includes('"status":500') || line.includes("unhandled error"))).toEqual([]);
  });
});
