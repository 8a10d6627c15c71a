import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClient } from "@acs-toolkit/client";

const client = createClient({ baseUrl: process.env.ACS_URL ?? "http://127.0.0.1:3000", apiKey: process.env.SESSION_API_KEY });
const { conversation_id } = await client.createConversation();

const notes = path.join(await mkdtemp(path.join(tmpdir(), "acs-")), "notes.md");
await writeFile(notes, "# Notes\n");

const result = await client.uploadFiles(conversation_id, [
  new File(["a,b\n1,2\n"], "report.csv", { type: "text/csv" }), // a File (or a Blob), as in a browser
  { name: "data.bin", data: Buffer.from([0, 1, 2, 255]) }, // bytes with a name
  notes, // a path: in Node only
  { name: "../escape.txt", data: "no" }, // a hostile name: the server skips it
]);
console.log(result.file_urls.map((url) => url.split("/").pop())); // [ 'report.csv', 'data.bin', 'notes.md' ]
console.log(result.skipped_files); // [ '../escape.txt' ]

const download = await client.downloadFile(conversation_id, "data.bin");
console.log(new Uint8Array(await download.arrayBuffer())); // Uint8Array(4) [ 0, 1, 2, 255 ]
