/** uploadFiles: stored files, hostile names skipped, duplicates skipped, bytes returned exactly. */
import { createHash, randomBytes } from "node:crypto";
import { ensure, expectConforms, expectStatus, fail, type Check } from "../check.js";
import type { CheckContext } from "../context.js";
import { describeReply } from "../http.js";

const BOUNDARY = "acs-conformance-boundary-7f3a9c";

/**
 * A multipart body built by hand: FormData would rewrite hostile names before they reach the
 * server. A name with a control character travels percent-encoded in `filename*` (RFC 7578 / 5987),
 * as a raw one would break the part's header.
 */
function multipart(files: Array<{ name: string; data: string | Buffer }>): Buffer {
  const parts = files.flatMap(({ name, data }) => {
    const control = [...name].some((c) => c.charCodeAt(0) < 0x20);
    const disposition = control
      ? `filename*=UTF-8''${encodeURIComponent(name)}`
      : `filename="${name.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
    return [
      Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="files"; ${disposition}\r\nContent-Type: application/octet-stream\r\n\r\n`),
      Buffer.isBuffer(data) ? data : Buffer.from(data),
      Buffer.from("\r\n"),
    ];
  });
  return Buffer.concat([...parts, Buffer.from(`--${BOUNDARY}--\r\n`)]);
}

const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

async function uploadRaw(ctx: CheckContext, conversationId: string, files: Array<{ name: string; data: string | Buffer }>) {
  return ctx.request("POST", `/api/conversations/${conversationId}/upload-files`, {
    body: new Uint8Array(multipart(files)),
    headers: { "Content-Type": `multipart/form-data; boundary=${BOUNDARY}` },
  });
}

/** Names a server must not store as given: traversal, absolute, empty, control characters. */
const HOSTILE_NAMES = ["../x", "/etc/passwd", "a/../../b", "..", "", "x\ny", "\u0007bell.txt"];

export const uploadChecks: Check[] = [
  {
    id: "upload.store",
    title: "uploaded files are stored: one file URL each, none skipped",
    spec: "uploadFiles 200 (UploadResponse)",
    async run(ctx) {
      const id = await ctx.createConversation({});
      const reply = await ctx.upload(id, [
        ["notes.txt", Buffer.from("notes")],
        ["data.csv", Buffer.from("a,b\n1,2\n")],
        ["image.png", randomBytes(64)],
      ]);
      expectConforms(ctx, "uploadFiles", reply, 200);
      ensure(reply.json.skipped_files.length === 0, () => `files were skipped: ${describeReply(reply)}`);
      ensure(new Set(reply.json.file_urls).size === 3, () => `three files did not give three file URLs: ${describeReply(reply)}`);
    },
  },
  {
    id: "upload.round-trip",
    title: "a binary file comes back byte for byte from its file URL",
    spec: "uploadFiles 200 file_urls; downloadFile 200",
    needs: ["extension:downloadFile"],
    async run(ctx) {
      const id = await ctx.createConversation({});
      // Every byte value (invalid UTF-8 included), then random bytes: a text decoding would corrupt them.
      const bytes = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), randomBytes(256 * 1024)]);
      const reply = await ctx.upload(id, [["data.bin", bytes]]);
      expectConforms(ctx, "uploadFiles", reply, 200);
      const url = reply.json.file_urls[0] ?? fail(`no file URL: ${describeReply(reply)}`);
      const download = await ctx.request("GET", url);
      expectStatus(download, 200);
      ensure(download.bytes.equals(bytes), `downloaded ${download.bytes.length} bytes (sha256 ${sha256(download.bytes).slice(0, 16)}…) instead of the ${bytes.length} uploaded (sha256 ${sha256(bytes).slice(0, 16)}…)`);
    },
  },
  {
    id: "upload.hostile-names",
    title: "files with hostile names (traversal, absolute, empty, control characters) are skipped, the good one stored",
    spec: "uploadFiles 200 (skipped_files)",
    async run(ctx) {
      const id = await ctx.createConversation({});
      const reply = await uploadRaw(ctx, id, [...HOSTILE_NAMES, "good.txt"].map((name) => ({ name, data: "payload" })));
      expectConforms(ctx, "uploadFiles", reply, 200);
      ensure(reply.json.file_urls.length === 1, () => `expected one stored file (good.txt): ${describeReply(reply)}`);
      const skipped = [...reply.json.skipped_files].sort();
      ensure(JSON.stringify(skipped) === JSON.stringify([...HOSTILE_NAMES].sort()), () => `skipped_files is ${JSON.stringify(reply.json.skipped_files)}, not the hostile names ${JSON.stringify(HOSTILE_NAMES)}`);
    },
  },
  {
    id: "upload.duplicate-name",
    title: "a second file with a name already stored in the conversation is skipped",
    spec: "uploadFiles 200 (skipped_files)",
    async run(ctx) {
      const id = await ctx.createConversation({});
      const first = await ctx.upload(id, [["twice.txt", Buffer.from("1")]]);
      expectConforms(ctx, "uploadFiles", first, 200);
      const second = await ctx.upload(id, [["twice.txt", Buffer.from("2")]]);
      expectConforms(ctx, "uploadFiles", second, 200);
      ensure(JSON.stringify(second.json.skipped_files) === '["twice.txt"]', () => `the duplicate was not skipped: ${describeReply(second)}`);
    },
  },
];
