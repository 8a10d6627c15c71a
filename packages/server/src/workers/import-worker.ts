/**
 * The import thread: parses and validates a large `POST /api/conversations` body (JSON.parse of
 * tens of MB, then every replayed event against the spec) and turns the events into rows, off the
 * request thread. It posts the request without its replay, then the rows in chunks that the request
 * thread writes one transaction each (conversations.ts, createFromJson).
 */
import { parentPort, type MessagePort } from "node:worker_threads";
import type { ConversationCreateRequest } from "@acs-toolkit/schema";
import { openapiDocument } from "@acs-toolkit/schema/documents";
import { parseReplay } from "../conversations.js";
import { parseJsonBody } from "../http/json-body.js";
import { RequestValidationError, RequestValidators } from "../http/validation.js";
import { prepareEvent, type PreparedEvent } from "../store/prepare.js";
import { serveJobs } from "./pool.js";

/** Rows per chunk, and bytes of event JSON per chunk: a chunk is written in about 15 ms. */
const CHUNK_ROWS = 1000;
const CHUNK_BYTES = 1024 * 1024;

const validators = new RequestValidators(openapiDocument);

/** The body's chunks from the request thread, gathered (`undefined` when the request gave up on it). */
function receiveBody(port: MessagePort): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const chunks: Uint8Array[] = [];
    port.on("message", (chunk: Uint8Array | { end: true; aborted?: true }) => {
      if (chunk instanceof Uint8Array) return void chunks.push(chunk);
      port.close();
      resolve(chunk.aborted ? undefined : Buffer.concat(chunks));
    });
  });
}

serveJobs(parentPort!, async (message, post) => {
  const body = await receiveBody(message.body as MessagePort);
  if (body === undefined) return post({}, true);
  const value = parseJsonBody(body);
  validators.body("createConversation", value);
  const request = value as ConversationCreateRequest;
  const events = request.replay_json ? parseReplay(request.replay_json) : [];
  const seen = new Map<string, number>();
  events.forEach(({ event }, index) => {
    if (seen.has(event.id)) {
      throw new RequestValidationError([{ loc: ["body", "replay_json", index, "id"], msg: `event id ${event.id} appears twice in the trajectory`, type: "value_error" }]);
    }
    seen.set(event.id, index);
  });
  post({ request: { ...request, replay_json: null }, events: events.length }, events.length === 0);
  let rows: PreparedEvent[] = [];
  let bytes = 0;
  events.forEach((entry, index) => {
    rows.push(prepareEvent(entry, index, true));
    bytes += entry.json.length;
    const last = index === events.length - 1;
    if (last || rows.length >= CHUNK_ROWS || bytes >= CHUNK_BYTES) {
      post({ rows }, last);
      rows = [];
      bytes = 0;
    }
  });
});
