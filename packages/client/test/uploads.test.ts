/**
 * `uploadFiles` with every kind of input, byte-exact through multipart/form-data and back through
 * `downloadFile`; file paths only in the Node entry.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@acs-toolkit/client";
import { createClient as createBrowserClient } from "@acs-toolkit/client/browser";
import { KEY, startReferenceServer, type ReferenceServer } from "./support/server.js";

let ref: ReferenceServer;
let dir: string;
let conversationId: string;
let client: ReturnType<typeof createClient>;
const contentTypes: string[] = [];
/** Every byte value, twice: a binary file that any text handling would damage. */
const binary = Buffer.from([...Array.from({ length: 256 }, (_, i) => i), ...Array.from({ length: 256 }, (_, i) => 255 - i)]);

const download = async (name: string) => Buffer.from(await (await client.downloadFile(conversationId, name)).arrayBuffer());

beforeAll(async () => {
  ref = await startReferenceServer();
  dir = await mkdtemp(path.join(tmpdir(), "acs-client-files-"));
  client = createClient({
    baseUrl: ref.url,
    apiKey: KEY,
    fetch: (request) => (contentTypes.push(request.headers.get("content-type") ?? ""), fetch(request)),
  });
  ({ conversation_id: conversationId } = await client.createConversation());
});

afterAll(async () => {
  await ref?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("uploadFiles", () => {
  it("sends multipart/form-data with a boundary, each file a part of the field `files`", async () => {
    contentTypes.length = 0;
    const result = await client.uploadFiles(conversationId, [new File(["one"], "one.txt"), new File(["two"], "two.txt")]);
    expect(contentTypes[0]).toMatch(/^multipart\/form-data; boundary=/);
    expect(result.file_urls).toEqual([`/api/conversations/${conversationId}/files/one.txt`, `/api/conversations/${conversationId}/files/two.txt`]);
    expect((await download("two.txt")).toString()).toBe("two");
  });

  it("takes File, Blob, Buffer, Uint8Array, ArrayBuffer and text with a name, byte for byte", async () => {
    const result = await client.uploadFiles(conversationId, [
      new File([binary], "file.bin"),
      { name: "buffer.bin", data: binary },
      { name: "view.bin", data: new Uint8Array(binary.buffer, binary.byteOffset + 256, 256) },
      { name: "arraybuffer.bin", data: binary.buffer.slice(binary.byteOffset, binary.byteOffset + binary.length) },
      { name: "blob.bin", data: new Blob([binary]) },
      { name: "text.md", data: "# Größe ✓\n", type: "text/markdown" },
    ]);
    expect(result.skipped_files).toEqual([]);
    expect(result.file_urls).toHaveLength(6);
    expect(await download("file.bin")).toEqual(binary);
    expect(await download("buffer.bin")).toEqual(binary);
    expect(await download("view.bin")).toEqual(binary.subarray(256));
    expect(await download("arraybuffer.bin")).toEqual(binary);
    expect(await download("blob.bin")).toEqual(binary);
    expect((await download("text.md")).toString("utf8")).toBe("# Größe ✓\n");
  });

  it("a bare Blob is sent with FormData's name `blob`", async () => {
    const result = await client.uploadFiles(conversationId, new Blob(["unnamed"]));
    expect(result.file_urls).toEqual([`/api/conversations/${conversationId}/files/blob`]);
  });

  it("takes one file or an array-like list (a FileList)", async () => {
    const single = await client.uploadFiles(conversationId, new File(["single"], "single.txt"));
    expect(single.file_urls).toHaveLength(1);
    const fileListLike = { length: 2, 0: new File(["a"], "list-a.txt"), 1: new File(["b"], "list-b.txt") };
    const listed = await client.uploadFiles(conversationId, fileListLike);
    expect(listed.file_urls).toHaveLength(2);
  });

  it("in Node, reads file paths, file: URLs and { path, name }", async () => {
    const big = Buffer.alloc(3 * 1024 * 1024 + 17, 7);
    binary.copy(big, 1000);
    await writeFile(path.join(dir, "big.bin"), big);
    await writeFile(path.join(dir, "notes.txt"), "from disk\n");
    const result = await client.uploadFiles(conversationId, [
      path.join(dir, "big.bin"),
      pathToFileURL(path.join(dir, "notes.txt")),
      { path: path.join(dir, "notes.txt"), name: "renamed.txt" },
    ]);
    expect(result.skipped_files).toEqual([]);
    expect(result.file_urls.map((url) => url.split("/").pop())).toEqual(["big.bin", "notes.txt", "renamed.txt"]);
    expect((await download("big.bin")).equals(big)).toBe(true);
    expect((await download("renamed.txt")).toString()).toBe("from disk\n");
  });

  it("a path that does not exist rejects before anything is sent", async () => {
    const before = contentTypes.length;
    await expect(client.uploadFiles(conversationId, [path.join(dir, "missing.txt")])).rejects.toThrow(/ENOENT.*missing\.txt/);
    await expect(client.uploadFiles(conversationId, [dir])).rejects.toThrow(/is not a file/);
    expect(contentTypes.length).toBe(before);
  });

  it("files the server will not store come back as skipped, with reasons", async () => {
    const result = await client.uploadFiles(conversationId, [new File(["x"], "../escape.txt"), new File(["y"], "fine.txt")]);
    expect(result.skipped_files).toEqual(["../escape.txt"]);
    expect(result.skipped_reasons?.[0]).toMatchObject({ name: "../escape.txt", reason: "path_traversal" });
    expect(result.file_urls).toEqual([`/api/conversations/${conversationId}/files/fine.txt`]);
  });

  it("the browser entry takes no paths: a TypeError that says what to pass", async () => {
    const browserClient = createBrowserClient({ baseUrl: ref.url, apiKey: KEY });
    await expect(browserClient.uploadFiles(conversationId, ["/etc/hostname" as never])).rejects.toThrow(TypeError);
    await expect(browserClient.uploadFiles(conversationId, ["/etc/hostname" as never])).rejects.toThrow(/only be read in Node/);
    const ok = await browserClient.uploadFiles(conversationId, [{ name: "from-browser-entry.txt", data: "ok" }]);
    expect(ok.file_urls).toHaveLength(1);
  });

  it("anything else is a TypeError", async () => {
    await expect(client.uploadFiles(conversationId, [42 as never])).rejects.toThrow(TypeError);
    await expect(client.uploadFiles(conversationId, null as never)).rejects.toThrow(TypeError);
  });
});
