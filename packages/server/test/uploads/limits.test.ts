import { createHash } from "node:crypto";
import http from "node:http";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { UploadLimits } from "../../src/upload-admission.js";
import { UploadRequestError } from "../../src/uploads.js";
import {
  BOUNDARY,
  buildMultipart,
  fileBlob,
  listDir,
  makeTempDir,
  MULTIPART_TYPE,
  random,
  rawPost,
  removeDir,
  sha256File,
  startUploadServer,
  waitFor,
  type UploadServer,
} from "./harness.js";

let root: string;
let server: UploadServer;

async function start(limits: Partial<UploadLimits>): Promise<void> {
  server = await startUploadServer({
    dir: join(root, "uploads"),
    limits: { maxFileBytes: 1024 * 1024, maxFiles: 10, maxRequestBytes: 8 * 1024 * 1024, ...limits },
  });
}

beforeEach(async () => {
  root = await makeTempDir();
});

afterEach(async () => {
  await server?.close();
  await removeDir(root);
});

describe("maxFileBytes", () => {
  it("keeps a file of exactly the limit and skips a larger one without leaving any file", async () => {
    await start({ maxFileBytes: 1000 });
    const { status, json } = await rawPost(
      server.url,
      buildMultipart([
        { filename: "exact.bin", data: random(1000) },
        { filename: "over.bin", data: random(1001) },
        { filename: "far-over.bin", data: random(300_000) },
        { filename: "after.txt", data: "after" },
      ]),
    );
    expect(status).toBe(200);
    expect(json.stored).toEqual([
      { name: "exact.bin", bytes: 1000 },
      { name: "after.txt", bytes: 5 },
    ]);
    expect(json.skipped).toEqual([
      { name: "over.bin", reason: "file_too_large", detail: "The file is larger than 1000 bytes." },
      { name: "far-over.bin", reason: "file_too_large", detail: "The file is larger than 1000 bytes." },
    ]);
    expect(await listDir(server.dir)).toEqual(["after.txt", "exact.bin"]);
  });

  it("lets a skipped over-limit name be uploaded again later", async () => {
    await start({ maxFileBytes: 10 });
    const first = await rawPost(server.url, buildMultipart([{ filename: "a.txt", data: "x".repeat(11) }]));
    expect(first.json.skipped[0].reason).toBe("file_too_large");
    const second = await rawPost(server.url, buildMultipart([{ filename: "a.txt", data: "small" }]));
    expect(second.json.stored).toEqual([{ name: "a.txt", bytes: 5 }]);
  });
});

describe("maxFiles", () => {
  it("skips every file part past the limit as too_many_files (skipped parts count)", async () => {
    await start({ maxFiles: 3 });
    const form = new FormData();
    form.append("files", fileBlob("1"), "one.txt");
    form.append("files", fileBlob("bad"), "../bad");
    form.append("files", fileBlob("3"), "three.txt");
    form.append("files", fileBlob("4"), "four.txt");
    form.append("files", fileBlob("5"), "five.txt");
    const res = await fetch(server.url, { method: "POST", body: form });
    const json = await res.json();
    expect(res.status).toBe(200);
    expect(json.stored.map((f: any) => f.name)).toEqual(["one.txt", "three.txt"]);
    expect(json.skipped.map((s: any) => [s.name, s.reason])).toEqual([
      ["../bad", "path_traversal"],
      ["four.txt", "too_many_files"],
      ["five.txt", "too_many_files"],
    ]);
    expect(json.skipped[1].detail).toBe("The request has more than 3 files; this file was not read.");
    expect(await listDir(server.dir)).toEqual(["one.txt", "three.txt"]);
  });

  it("stops listing after maxFiles + 1000 file parts but still answers", async () => {
    await start({ maxFiles: 1 });
    const parts = Array.from({ length: 1105 }, (_, i) => ({ filename: `f${i}.txt`, data: "x" }));
    const { status, json } = await rawPost(server.url, buildMultipart(parts));
    expect(status).toBe(200);
    expect(json.stored).toEqual([{ name: "f0.txt", bytes: 1 }]);
    expect(json.skipped).toHaveLength(1001);
    expect(json.skipped.at(-1)).toEqual({
      name: "f1001.txt",
      reason: "too_many_files",
      detail: "The request has more than 1 files; this file and the ones after it were not read.",
    });
  });
});

describe("maxRequestBytes", () => {
  it("stores what came before the limit, skips the rest as request_too_large, and still answers", async () => {
    await start({ maxFileBytes: 10 * 1024 * 1024, maxRequestBytes: 1024 * 1024 });
    const form = new FormData();
    form.append("files", fileBlob(random(100_000)), "small.bin");
    form.append("files", fileBlob(random(2 * 1024 * 1024)), "big.bin");
    form.append("files", fileBlob(random(10_000)), "late.bin");
    form.append("files", fileBlob(random(3 * 1024 * 1024)), "later.bin");
    const res = await fetch(server.url, { method: "POST", body: form });
    expect(res.status).toBe(200);
    const json = await res.json();
    expect(json.stored).toEqual([{ name: "small.bin", bytes: 100_000 }]);
    expect(json.skipped.map((s: any) => [s.name, s.reason])).toEqual([
      ["big.bin", "request_too_large"],
      ["late.bin", "request_too_large"],
      ["later.bin", "request_too_large"],
    ]);
    expect(json.skipped[0].detail).toBe(`The request is larger than ${1024 * 1024} bytes; this file was not stored.`);
    expect(await listDir(server.dir)).toEqual(["small.bin"]);
  });

  it("answers an over-limit body that is also cut short (the rest is only drained)", async () => {
    await start({ maxRequestBytes: 64 * 1024 });
    const body = buildMultipart([{ filename: "big.bin", data: random(200_000) }], { close: false });
    const { status, json } = await rawPost(server.url, body.subarray(0, body.length - 10));
    expect(status).toBe(200);
    expect(json).toEqual({
      stored: [],
      skipped: [{ name: "big.bin", reason: "request_too_large", detail: expect.any(String) }],
      sawField: true,
    });
    expect(await listDir(server.dir)).toEqual([]);
  });
});

describe("client abort", () => {
  it("removes temporary and already-stored files, rejects with UploadRequestError, and keeps serving", async () => {
    await start({ maxFileBytes: 64 * 1024 * 1024, maxRequestBytes: 128 * 1024 * 1024 });
    const head = buildMultipart([{ filename: "done.txt", data: "complete" }], { close: false });
    const partHeader = Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="files"; filename="partial.bin"\r\n` +
        "Content-Type: application/octet-stream\r\n\r\n",
    );
    const req = http.request(server.url, {
      method: "POST",
      headers: { "content-type": MULTIPART_TYPE, "content-length": String(64 * 1024 * 1024) },
    });
    req.on("error", () => {}); // we destroy it on purpose
    req.write(head);
    req.write(partHeader);
    const chunk = random(64 * 1024);
    for (let i = 0; i < 16; i++) req.write(chunk); // 1 MiB of the file
    // The temporary file exists and done.txt is stored: the upload is really in flight.
    await waitFor(async () => {
      const names = await listDir(server.dir).catch((): string[] => []);
      return names.includes("done.txt") && names.some((n) => n.startsWith(".acs-upload-"));
    });
    req.destroy();

    const settled = await server.nextSettled();
    expect(settled.ok).toBe(false);
    if (!settled.ok) {
      expect(settled.error).toBeInstanceOf(UploadRequestError);
      expect((settled.error as UploadRequestError).code).toBe("aborted");
    }
    expect(await listDir(server.dir)).toEqual([]);

    const { status, json } = await rawPost(server.url, buildMultipart([{ filename: "next.txt", data: "next" }]));
    expect(status).toBe(200);
    expect(json.stored).toEqual([{ name: "next.txt", bytes: 4 }]);
  });

  it("settles when the client aborts between parts and during a part header", async () => {
    await start({});
    for (const cut of [
      buildMultipart([{ filename: "a.txt", data: "a" }], { close: false }),
      Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-da`),
    ]) {
      const req = http.request(server.url, {
        method: "POST",
        headers: { "content-type": MULTIPART_TYPE, "content-length": "1000000" },
      });
      req.on("error", () => {});
      req.write(cut);
      await new Promise((done) => setTimeout(done, 50));
      req.destroy();
      const settled = await server.nextSettled();
      expect(settled.ok).toBe(false);
      if (!settled.ok) expect((settled.error as UploadRequestError).code).toBe("aborted");
      expect(await listDir(server.dir)).toEqual([]);
    }
  });
});

describe("memory", () => {
  it("streams a 200 MB upload to disk with flat memory", async () => {
    const total = 200 * 1024 * 1024;
    await start({ maxFileBytes: 256 * 1024 * 1024, maxRequestBytes: 300 * 1024 * 1024 });
    const chunk = random(64 * 1024);
    const head = Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="files"; filename="huge.bin"\r\n` +
        "Content-Type: application/octet-stream\r\n\r\n",
    );
    const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
    const hash = createHash("sha256");
    // The body is generated as it is sent: the same 64 KiB chunk again and again, never allocated whole.
    async function* body() {
      yield head;
      for (let sent = 0; sent < total; sent += chunk.length) {
        hash.update(chunk);
        yield chunk;
      }
      yield tail;
    }

    (globalThis as { gc?: () => void }).gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 20);
    try {
      const { status, json } = await rawPost(server.url, Readable.from(body(), { objectMode: false }), {
        "content-type": MULTIPART_TYPE,
        "content-length": String(head.length + total + tail.length),
      });
      expect(status).toBe(200);
      expect(json.stored).toEqual([{ name: "huge.bin", bytes: total }]);
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, process.memoryUsage().rss);
    const growth = peak - before;
    expect(growth, `rss grew by ${(growth / 1024 / 1024).toFixed(1)} MiB`).toBeLessThan(50 * 1024 * 1024);
    expect(await sha256File(join(server.dir, "huge.bin"))).toBe(hash.digest("hex"));
  });
});
