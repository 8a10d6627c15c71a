/**
 * Files kept in memory (the browser mock's) and on disk (the server's) admit the same files for the
 * same reasons under the same limits: one table of forms through both.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { memoryFiles, type ApiBody, type ConversationFiles, type UploadLimits } from "../../src/api/index.js";
import { diskFiles } from "../../src/http/disk-files.js";

const ID = "6c2b1f0e-1d2a-4c3b-9e4f-5a6b7c8d9e0f";
const LIMITS: UploadLimits = { maxFileBytes: 4, maxFiles: 3, maxRequestBytes: 100_000 };
const dataDir = mkdtempSync(path.join(tmpdir(), "acs-memory-files-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** A request's body as the API sees it. */
function bodyOf(request: Request): ApiBody {
  return {
    length: undefined,
    compressed: false,
    is: () => true,
    jsonBytes: () => Promise.resolve(undefined),
    async *chunks() {
      const reader = request.body!.getReader();
      for (let read = await reader.read(); !read.done; read = await reader.read()) yield read.value;
    },
    discard: () => void request.body?.cancel(),
  };
}

async function receive(files: ConversationFiles, parts: Array<[string, string, string]>) {
  const form = new FormData();
  for (const [field, name, content] of parts) form.append(field, new Blob([content]), name);
  const request = new Request("http://x/", { method: "POST", body: form });
  const outcome = await files.receive(ID, bodyOf(request), { "content-type": request.headers.get("content-type") ?? undefined });
  return { ...outcome, stored: outcome.stored.map(({ name }) => ({ name })) };
}

const forms: Array<Array<[string, string, string]>> = [
  [["files", "a.txt", "1234"], ["files", "big.txt", "12345"], ["files", "A.TXT", "x"], ["files", "late.txt", "x"], ["files", "later.txt", "x"]],
  [["files", "a.txt", "agn"], ["files", "b.txt", ""], ["files", " ", "x"], ["files", "x/y", "x"]],
  [["other", "c.txt", "x"]],
  [["files", "ÅngströM.md", "x"], ["files", "ångström.md", "y"], ["files", "\u202Eexe.txt", "x"]],
];

describe("memory and disk files", () => {
  it("admit the same files under the same limits", async () => {
    const disk = diskFiles({ dataDir, limits: LIMITS });
    const memory = memoryFiles(LIMITS);
    for (const form of forms) expect(await receive(memory, form), JSON.stringify(form)).toEqual(await receive(disk, form));
    for (const name of ["a.txt", "A.txt", "b.txt", "missing.txt"]) {
      const [fromDisk, fromMemory] = await Promise.all([disk.open(ID, name), memory.open(ID, name)]);
      expect(fromMemory?.size, name).toBe(fromDisk?.size);
      fromDisk?.cancel();
    }
  });

  it("skips every file of a body past maxRequestBytes as request_too_large", async () => {
    const outcome = await receive(memoryFiles({ ...LIMITS, maxRequestBytes: 100 }), [["files", "a.txt", "1"], ["files", "b.txt", "2"]]);
    expect(outcome).toEqual({
      sawField: true,
      stored: [],
      skipped: ["a.txt", "b.txt"].map((name) => ({ name, reason: "request_too_large", detail: "The request is larger than 100 bytes; this file was not stored." })),
    });
  });

  it("refuses a body that is not multipart/form-data", async () => {
    const request = new Request("http://x/", { method: "POST", body: "{}" });
    await expect(memoryFiles().receive(ID, bodyOf(request), { "content-type": "application/json" })).rejects.toMatchObject({ detail: [{ loc: ["body"], msg: "The request body must be multipart/form-data." }] });
  });
});
