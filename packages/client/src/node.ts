/**
 * @packageDocumentation
 * The Node entry of `@acs-toolkit/client` (condition `node`): the same client as the browser entry,
 * and `uploadFiles` also takes file paths (`string`, `file:` URL or `{ path, name?, type? }`),
 * read lazily from disk with `fs.openAsBlob`.
 */
import { openAsBlob } from "node:fs";
import { stat } from "node:fs/promises";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import { WebSocket } from "ws";
import { createClientFor, type AcsClient, type ClientOptions } from "./client.js";
import { API_KEY_HEADER } from "./request.js";
import type { LiveSocket, OpenSocket } from "./live.js";
import type { NodeUploadInput } from "./files.js";

export * from "./shared.js";

async function readPath(path: string | URL, name?: string, type?: string): Promise<File> {
  const file = typeof path === "string" ? path : fileURLToPath(path);
  // stat first: its error names the path and the reason (ENOENT, EACCES), openAsBlob's does not.
  if (!(await stat(file)).isFile()) throw new TypeError(`uploadFiles: ${file} is not a file`);
  const blob = await openAsBlob(file, type ? { type } : undefined);
  // A File over the disk-backed Blob: the bytes are read when the request body is sent.
  return new File([blob], name ?? basename(file), { type: type ?? "application/octet-stream" });
}

/**
 * A client for the service at `options.baseUrl`; its `uploadFiles` also reads files by path.
 *
 * @example
 * const client = createClient({ baseUrl: "http://127.0.0.1:3000", apiKey: process.env.SESSION_API_KEY });
 * await client.uploadFiles(conversationId, ["./report.csv"]);
 */
/** `ws` sockets, which can carry the key as a header (no auth frame, no key in the URL). */
const openSocket: OpenSocket = (url, key) => {
  const socket = new WebSocket(url, key === undefined ? {} : { headers: { [API_KEY_HEADER]: key } });
  return { socket: socket as unknown as LiveSocket, sentKey: key !== undefined };
};

export function createClient(options: ClientOptions): AcsClient<NodeUploadInput> {
  return createClientFor<NodeUploadInput>(options, { readPath, ...(options.WebSocket ? {} : { openSocket }) });
}
