import { readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_UPLOAD_LIMITS, type UploadLimits } from "../../src/upload-admission.js";
import type { UploadOutcome } from "../../src/uploads.js";
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
  sha256,
  sha256File,
  startUploadServer,
  type UploadServer,
} from "./harness.js";

let root: string;
let server: UploadServer;

async function start(limits: UploadLimits = DEFAULT_UPLOAD_LIMITS, fieldName?: string): Promise<void> {
  server = await startUploadServer({ dir: join(root, "conversation", "uploads"), limits, ...(fieldName ? { fieldName } : {}) });
}

async function postForm(form: FormData): Promise<{ status: number; json: any }> {
  const res = await fetch(server.url, { method: "POST", body: form });
  return { status: res.status, json: await res.json() };
}

beforeEach(async () => {
  root = await makeTempDir();
});

afterEach(async () => {
  await server?.close();
  await removeDir(root);
});

describe("receiveUploads: storing", () => {
  it("creates the folder and stores files from fetch + FormData, in order", async () => {
    await start();
    const form = new FormData();
    form.append("files", fileBlob("a,b\n1,2\n", "text/csv"), "report.csv");
    form.append("files", fileBlob("hello"), "résumé.pdf");
    form.append("files", fileBlob("数据"), "数据.csv");
    const { status, json } = await postForm(form);
    expect(status).toBe(200);
    expect(json).toEqual({
      stored: [
        { name: "report.csv", bytes: 8 },
        { name: "résumé.pdf", bytes: 5 },
        { name: "数据.csv", bytes: 6 },
      ],
      skipped: [],
      sawField: true,
    } satisfies UploadOutcome);
    expect(await listDir(server.dir)).toEqual(["report.csv", "résumé.pdf", "数据.csv"].sort());
    expect(await readFile(join(server.dir, "数据.csv"), "utf8")).toBe("数据");
  });

  it("round-trips a 3 MB random binary file byte for byte, up and down", async () => {
    await start();
    const data = random(3 * 1024 * 1024);
    const form = new FormData();
    form.append("files", fileBlob(data), "blob.bin");
    const { status, json } = await postForm(form);
    expect(status).toBe(200);
    expect(json.stored).toEqual([{ name: "blob.bin", bytes: data.length }]);
    expect(await sha256File(join(server.dir, "blob.bin"))).toBe(sha256(data));

    const download = await fetch(`${server.url}/files/blob.bin`);
    expect(download.status).toBe(200);
    expect(download.headers.get("content-length")).toBe(String(data.length));
    expect(sha256(Buffer.from(await download.arrayBuffer()))).toBe(sha256(data));
  });

  it("keeps bytes that look like multipart syntax, CRLFs and invalid UTF-8", async () => {
    await start();
    const tricky = Buffer.concat([
      Buffer.from("\r\n--\r\n--not-the-boundary\r\n\r\n"),
      Buffer.from([0xff, 0xfe, 0x00, 0xc3, 0x28, 0xe2, 0x82]),
      Buffer.from(`\r\n--${"-".repeat(10)}acs-test-boundary\r\n`),
      Buffer.from("\r\n"),
    ]);
    const { status, json } = await rawPost(server.url, buildMultipart([{ filename: "tricky.bin", data: tricky }]));
    expect(status).toBe(200);
    expect(json.stored).toEqual([{ name: "tricky.bin", bytes: tricky.length }]);
    expect((await readFile(join(server.dir, "tricky.bin"))).equals(tricky)).toBe(true);
  });

  it("stores an empty file", async () => {
    await start();
    const { json } = await rawPost(server.url, buildMultipart([{ filename: "empty.txt", data: "" }]));
    expect(json.stored).toEqual([{ name: "empty.txt", bytes: 0 }]);
    expect(await readFile(join(server.dir, "empty.txt"), "utf8")).toBe("");
  });

  it("stores an NFD name under its NFC form and reports the name as sent when skipped", async () => {
    await start();
    const nfd = "re\u0301sume\u0301.pdf";
    const { json } = await rawPost(
      server.url,
      buildMultipart([
        { filename: nfd, data: "1" },
        { filename: "résumé.pdf", data: "2" },
      ]),
    );
    expect(json.stored).toEqual([{ name: "résumé.pdf", bytes: 1 }]);
    expect(json.skipped).toEqual([
      { name: "résumé.pdf", reason: "duplicate_name", detail: expect.any(String) },
    ]);
    expect(await listDir(server.dir)).toEqual(["résumé.pdf"]);
  });
});

describe("receiveUploads: hostile names (hand-built bodies)", () => {
  it("skips each hostile name, stores the good one, and writes nothing outside the folder", async () => {
    await start();
    const long = `${"n".repeat(296)}.txt`; // 300 bytes
    const { status, json } = await rawPost(
      server.url,
      buildMultipart([
        { filename: "../x", data: "1" },
        { filename: "/etc/passwd", data: "2" },
        { filename: "a/../../b", data: "3" },
        { filename: "..", data: "4" },
        { filename: "", data: "5" },
        { filenameStar: "\u0000x", data: "6" },
        { filenameStar: "x\ny", data: "7" },
        { filename: long, data: "8" },
        { filenameStar: "C:\\x", data: "9" },
        { filenameStar: "\\\\server\\share", data: "10" },
        { filename: "docs/readme.md", data: "11" },
        { filename: "ok.txt", data: "fine" },
      ]),
    );
    expect(status).toBe(200);
    expect(json.stored).toEqual([{ name: "ok.txt", bytes: 4 }]);
    expect(json.skipped.map((s: any) => [s.name, s.reason])).toEqual([
      ["../x", "path_traversal"],
      ["/etc/passwd", "absolute_path"],
      ["a/../../b", "path_traversal"],
      ["..", "path_traversal"],
      ["", "empty_name"],
      ["\u0000x", "invalid_name"],
      ["x\ny", "invalid_name"],
      [long, "invalid_name"],
      ["C:\\x", "absolute_path"],
      ["\\\\server\\share", "absolute_path"],
      ["docs/readme.md", "invalid_name"],
    ]);
    for (const skipped of json.skipped) expect(skipped.detail).toMatch(/^[A-Z].*\.$/u);
    expect(await listDir(server.dir)).toEqual(["ok.txt"]);
    // Nothing escaped: the parents hold only what the test made.
    expect(await listDir(dirname(server.dir))).toEqual(["uploads"]);
    expect(await listDir(root)).toEqual(["conversation"]);
  });

  it("skips names FormData sends as-is (traversal, absolute, empty, tab)", async () => {
    await start();
    const form = new FormData();
    form.append("files", fileBlob("1"), "../x");
    form.append("files", fileBlob("2"), "/etc/passwd");
    form.append("files", fileBlob("3"), "");
    form.append("files", fileBlob("4"), "tab\there");
    const { status, json } = await postForm(form);
    expect(status).toBe(200);
    expect(json.stored).toEqual([]);
    expect(json.skipped.map((s: any) => [s.name, s.reason])).toEqual([
      ["../x", "path_traversal"],
      ["/etc/passwd", "absolute_path"],
      ["", "empty_name"],
      ["tab\there", "invalid_name"],
    ]);
    expect(await listDir(server.dir)).toEqual([]);
  });

  it("answers a raw NUL byte in a part header as malformed multipart (header bytes are not a name)", async () => {
    await start();
    // FormData puts the NUL in the header as-is; busboy refuses such a header, so the request is a 422.
    const form = new FormData();
    form.append("files", fileBlob("ok"), "ok.txt");
    form.append("files", fileBlob("1"), "\u0000x");
    const { status, json } = await postForm(form);
    expect(status).toBe(422);
    expect(json.code).toBe("malformed_multipart");
    expect(await listDir(server.dir)).toEqual([]);
  });

  it("counts a file part without a file name as empty; ignores text parts of the field", async () => {
    await start();
    const { json } = await rawPost(
      server.url,
      buildMultipart([
        { disposition: 'form-data; name="files"', contentType: "application/octet-stream", data: "nameless" },
        { disposition: 'form-data; name="files"', contentType: "text/plain", data: "just text" },
      ]),
    );
    expect(json).toEqual({
      stored: [],
      skipped: [{ name: "", reason: "empty_name", detail: expect.any(String) }],
      sawField: true,
    });
  });

  it("cuts a very long reported name", async () => {
    await start();
    const huge = "x".repeat(5000);
    const { json } = await rawPost(server.url, buildMultipart([{ filename: huge, data: "1" }]));
    expect(json.skipped[0].reason).toBe("invalid_name");
    expect(json.skipped[0].name).toBe(`${"x".repeat(1024)}…`);
  });
});

describe("receiveUploads: duplicates", () => {
  it("skips a name repeated in the same request (the first wins)", async () => {
    await start();
    const { json } = await rawPost(
      server.url,
      buildMultipart([
        { filename: "a.txt", data: "first" },
        { filename: "a.txt", data: "second" },
      ]),
    );
    expect(json.stored).toEqual([{ name: "a.txt", bytes: 5 }]);
    expect(json.skipped).toEqual([{ name: "a.txt", reason: "duplicate_name", detail: expect.any(String) }]);
    expect(await readFile(join(server.dir, "a.txt"), "utf8")).toBe("first");
  });

  it("skips a name already stored and does not overwrite it", async () => {
    await start();
    await rawPost(server.url, buildMultipart([{ filename: "a.txt", data: "original" }]));
    const { json } = await rawPost(
      server.url,
      buildMultipart([
        { filename: "a.txt", data: "replacement" },
        { filename: "b.txt", data: "b" },
      ]),
    );
    expect(json.stored).toEqual([{ name: "b.txt", bytes: 1 }]);
    expect(json.skipped).toEqual([
      { name: "a.txt", reason: "duplicate_name", detail: "A file with this name (ignoring case) is already stored; it was not overwritten." },
    ]);
    expect(await readFile(join(server.dir, "a.txt"), "utf8")).toBe("original");
  });

  it("names that differ only by case are one name, in one request and across requests", async () => {
    await start();
    const first = await rawPost(
      server.url,
      buildMultipart([
        { filename: "Report.csv", data: "first" },
        { filename: "report.CSV", data: "second" },
        { filename: "straße.txt", data: "s" },
      ]),
    );
    expect(first.json.stored).toEqual([{ name: "Report.csv", bytes: 5 }, { name: "straße.txt", bytes: 1 }]);
    expect(first.json.skipped).toEqual([{ name: "report.CSV", reason: "duplicate_name", detail: expect.stringMatching(/case/) }]);
    const second = await rawPost(server.url, buildMultipart([{ filename: "REPORT.csv", data: "x" }, { filename: "STRASSE.TXT", data: "y" }]));
    expect(second.json.stored).toEqual([]);
    expect(second.json.skipped.map((s: { reason: string }) => s.reason)).toEqual(["duplicate_name", "duplicate_name"]);
    expect(await listDir(server.dir)).toEqual(["Report.csv", "straße.txt"]);
  });

  it("lets exactly one of two concurrent uploads of names differing by case win", async () => {
    await start();
    const [one, two] = await Promise.all([
      rawPost(server.url, buildMultipart([{ filename: "Race.bin", data: random(256 * 1024) }])),
      rawPost(server.url, buildMultipart([{ filename: "rACE.bin", data: random(256 * 1024) }])),
    ]);
    expect(one.json.stored.length + two.json.stored.length).toBe(1);
    expect(await listDir(server.dir)).toHaveLength(1);
  });

  it("refuses names that are not valid UTF-8 rather than storing them as U+FFFD (two names would collide)", async () => {
    await start();
    const part = (nameBytes: number[], data: string) =>
      Buffer.concat([
        Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="files"; filename="a`),
        Buffer.from(nameBytes),
        Buffer.from(`.txt"\r\nContent-Type: application/octet-stream\r\n\r\n${data}\r\n`),
      ]);
    const body = Buffer.concat([part([0xff], "one"), part([0xfe], "two"), part([0xc3, 0xa9], "three"), Buffer.from(`--${BOUNDARY}--\r\n`)]);
    const { json } = await rawPost(server.url, body);
    expect(json.stored).toEqual([{ name: "aé.txt", bytes: 5 }]);
    expect(json.skipped.map((s: { reason: string }) => s.reason)).toEqual(["invalid_name", "invalid_name"]);
    expect(await listDir(server.dir)).toEqual(["aé.txt"]);
  });

  it("lets exactly one of two concurrent uploads of the same name win", async () => {
    await start();
    const [one, two] = await Promise.all([
      rawPost(server.url, buildMultipart([{ filename: "race.bin", data: random(256 * 1024) }])),
      rawPost(server.url, buildMultipart([{ filename: "race.bin", data: random(256 * 1024) }])),
    ]);
    expect(one.json.stored.length + two.json.stored.length).toBe(1);
    expect([...one.json.skipped, ...two.json.skipped].map((s: any) => s.reason)).toEqual(["duplicate_name"]);
    expect(await listDir(server.dir)).toEqual(["race.bin"]);
  });
});

describe("receiveUploads: fields", () => {
  it("reports sawField false when no part of `files` was sent, and stores nothing", async () => {
    await start();
    const form = new FormData();
    form.append("attachments", fileBlob("not here"), "other.txt");
    form.append("note", "hello");
    const { status, json } = await postForm(form);
    expect(status).toBe(200);
    expect(json).toEqual({ stored: [], skipped: [], sawField: false });
    expect(await listDir(server.dir)).toEqual([]);
  });

  it("ignores parts of other fields next to `files`", async () => {
    await start();
    const form = new FormData();
    form.append("other", fileBlob(random(100_000)), "ignored.bin");
    form.append("files", fileBlob("kept"), "kept.txt");
    form.append("text", "value");
    const { json } = await postForm(form);
    expect(json).toEqual({ stored: [{ name: "kept.txt", bytes: 4 }], skipped: [], sawField: true });
    expect(await listDir(server.dir)).toEqual(["kept.txt"]);
  });

  it("honours a custom field name", async () => {
    await start(DEFAULT_UPLOAD_LIMITS, "upload");
    const form = new FormData();
    form.append("files", fileBlob("no"), "no.txt");
    form.append("upload", fileBlob("yes"), "yes.txt");
    const { json } = await postForm(form);
    expect(json.stored).toEqual([{ name: "yes.txt", bytes: 3 }]);
    expect(await listDir(server.dir)).toEqual(["yes.txt"]);
  });
});

describe("receiveUploads: bad requests", () => {
  it("rejects a JSON body as not multipart", async () => {
    await start();
    const res = await fetch(server.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ files: ["a"] }),
    });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({ code: "not_multipart", detail: "The request body must be multipart/form-data." });
  });

  it("rejects a urlencoded form and a request without Content-Type", async () => {
    await start();
    const urlencoded = await fetch(server.url, { method: "POST", body: new URLSearchParams({ files: "x" }) });
    expect(urlencoded.status).toBe(422);
    const none = await rawPost(server.url, Buffer.from("raw"), {});
    expect(none).toEqual({ status: 422, json: { code: "not_multipart", detail: expect.any(String) } });
  });

  it("rejects multipart without a boundary", async () => {
    await start();
    const { status, json } = await rawPost(server.url, buildMultipart([{ filename: "a.txt", data: "a" }]), {
      "content-type": "multipart/form-data",
    });
    expect(status).toBe(422);
    expect(json.code).toBe("malformed_multipart");
  });

  it("rejects a body that ends before the closing boundary and keeps nothing it stored", async () => {
    await start();
    const body = buildMultipart(
      [
        { filename: "complete.txt", data: "complete" },
        { filename: "cut.txt", data: "cut off" },
      ],
      { close: false },
    );
    const { status, json } = await rawPost(server.url, body.subarray(0, body.length - 4));
    expect(status).toBe(422);
    expect(json.code).toBe("malformed_multipart");
    expect(json.detail).toMatch(/^The multipart body is malformed: .*\.$/u);
    expect(await listDir(server.dir)).toEqual([]);
  });

  it("rejects a body with no boundary at all in it", async () => {
    await start();
    const { status, json } = await rawPost(server.url, Buffer.from("this is not multipart at all"));
    expect(status).toBe(422);
    expect(json.code).toBe("malformed_multipart");
  });

  it("rejects a malformed part header", async () => {
    await start();
    const body = Buffer.from(
      `--${"----acs-test-boundary-7MA4YWxkTrZu0gW"}\r\nthis header has no colon\r\n\r\ndata\r\n--${"----acs-test-boundary-7MA4YWxkTrZu0gW"}--\r\n`,
    );
    const { status, json } = await rawPost(server.url, body, { "content-type": MULTIPART_TYPE });
    expect(status).toBe(422);
    expect(json.code).toBe("malformed_multipart");
  });

  it("refuses to overwrite: a pre-existing file keeps its bytes even with a malformed follow-up", async () => {
    await start();
    await rawPost(server.url, buildMultipart([{ filename: "keep.txt", data: "keep" }]));
    await writeFile(join(server.dir, "other.txt"), "other");
    const body = buildMultipart([{ filename: "keep.txt", data: "new" }], { close: false });
    const { status } = await rawPost(server.url, body);
    expect(status).toBe(422);
    expect(await readFile(join(server.dir, "keep.txt"), "utf8")).toBe("keep");
    expect(await listDir(server.dir)).toEqual(["keep.txt", "other.txt"]);
  });
});
