/**
 * Test harness for the upload core: a bare node:http server whose handler calls receiveUploads
 * (POST) or openStoredFile (GET /files/<name>), and clients that send real multipart bodies —
 * through fetch + FormData, or hand-built bytes through node:http for names FormData would rewrite.
 */
import { createHash, randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { UploadLimits } from "../../src/upload-admission.js";
import { openStoredFile, UploadFolders } from "../../src/upload-folders.js";
import {
  receiveUploads,
  UploadRequestError,
  type UploadOutcome,
} from "../../src/uploads.js";

export type Settled =
  | { ok: true; outcome: UploadOutcome }
  | { ok: false; error: unknown };

export interface UploadServer {
  url: string;
  dir: string;
  /** Every settled receiveUploads call, in order. */
  settled: Settled[];
  /** Resolves with the next settled receiveUploads call (or one already settled and not yet taken). */
  nextSettled(): Promise<Settled>;
  close(): Promise<void>;
}

export async function makeTempDir(prefix = "acs-uploads-"): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

export async function startUploadServer(options: {
  dir: string;
  limits: UploadLimits;
  fieldName?: string;
}): Promise<UploadServer> {
  const settled: Settled[] = [];
  let taken = 0;
  const waiters: Array<(value: Settled) => void> = [];
  const record = (value: Settled) => {
    settled.push(value);
    const waiter = waiters.shift();
    if (waiter) {
      taken++;
      waiter(value);
    }
  };

  const folders = new UploadFolders();
  const server = http.createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
      res.end(text);
    };
    if (req.method === "GET" && req.url?.startsWith("/files/")) {
      void openStoredFile(options.dir, decodeURIComponent(req.url.slice("/files/".length))).then((file) => {
        if (!file) return send(404, { detail: "not found" });
        res.writeHead(200, { "content-type": "application/octet-stream", "content-length": file.size });
        createReadStream("", { fd: file.handle }).pipe(res);
      });
      return;
    }
    receiveUploads(req, { ...options, folders }).then(
      (outcome) => {
        record({ ok: true, outcome });
        send(200, outcome);
      },
      (error: unknown) => {
        record({ ok: false, error });
        if (error instanceof UploadRequestError) send(422, { code: error.code, detail: error.detail });
        else send(500, { detail: String(error) });
      },
    );
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    dir: options.dir,
    settled,
    nextSettled() {
      if (taken < settled.length) return Promise.resolve(settled[taken++]!);
      return new Promise((done) => waiters.push(done));
    },
    close() {
      server.closeAllConnections();
      return new Promise((done) => server.close(() => done()));
    },
  };
}

interface RawPart {
  /** Form field name; default "files". */
  field?: string;
  /** Sent as filename="…" (quotes and backslashes escaped, every other byte as UTF-8). */
  filename?: string;
  /** Sent as filename*=UTF-8''<percent-encoded>, which busboy decodes (the way to send a NUL or LF). */
  filenameStar?: string;
  /** The whole Content-Disposition value, for malformed headers. */
  disposition?: string;
  contentType?: string;
  data: Buffer | string;
}

export const BOUNDARY = "----acs-test-boundary-7MA4YWxkTrZu0gW";

function quote(value: string): string {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

function partHeader(part: RawPart): Buffer {
  let disposition = part.disposition;
  if (disposition === undefined) {
    disposition = `form-data; name=${quote(part.field ?? "files")}`;
    if (part.filename !== undefined) disposition += `; filename=${quote(part.filename)}`;
    if (part.filenameStar !== undefined) {
      disposition += `; filename*=UTF-8''${encodeURIComponent(part.filenameStar)}`;
    }
  }
  const contentType = part.contentType ?? "application/octet-stream";
  return Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\nContent-Type: ${contentType}\r\n\r\n`, "utf8");
}

/** A complete multipart/form-data body (set `close: false` to leave out the closing boundary). */
export function buildMultipart(parts: RawPart[], { close = true } = {}): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    chunks.push(partHeader(part), Buffer.isBuffer(part.data) ? part.data : Buffer.from(part.data, "utf8"), Buffer.from("\r\n"));
  }
  if (close) chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(chunks);
}

export const MULTIPART_TYPE = `multipart/form-data; boundary=${BOUNDARY}`;

interface RawResponse {
  status: number;
  json: any;
}

/** POSTs `body` with node:http (no normalisation of anything) and reads the JSON answer. */
export function rawPost(
  url: string,
  body: Buffer | Readable,
  headers: Record<string, string> = { "content-type": MULTIPART_TYPE },
): Promise<RawResponse> {
  return new Promise((resolvePost, rejectPost) => {
    const req = http.request(url, { method: "POST", headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        try {
          resolvePost({ status: res.statusCode ?? 0, json: JSON.parse(text) });
        } catch (error) {
          rejectPost(new Error(`not JSON (${res.statusCode}): ${text.slice(0, 200)}`, { cause: error }));
        }
      });
      res.on("error", rejectPost);
    });
    req.on("error", rejectPost);
    if (Buffer.isBuffer(body)) {
      req.end(body);
    } else {
      pipeline(body, req).catch(rejectPost);
    }
  });
}

export function sha256(data: Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

export async function sha256File(path: string): Promise<string> {
  const hash = createHash("sha256");
  await pipeline(createReadStream(path), hash);
  return hash.digest("hex");
}

/** Names in `dir`, sorted (temporary files included). */
export async function listDir(dir: string): Promise<string[]> {
  return (await readdir(dir)).sort();
}

export function random(bytes: number): Buffer {
  return randomBytes(bytes);
}

/** Waits until `check` is true, polling every 10 ms, failing after `timeoutMs`. */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > timeoutMs) throw new Error("waitFor: timed out");
    await new Promise((done) => setTimeout(done, 10));
  }
}

export function fileBlob(data: Buffer | string, type = "application/octet-stream"): Blob {
  return new Blob([typeof data === "string" ? data : new Uint8Array(data)], { type });
}
