/**
 * A hostile network: malformed bytes at every layer get an answer in the interface's
 * shape — 422 with a precise `loc`, or `{"detail": …}` for what is not a validation error — and
 * never crash the process, answer 500 or echo what was sent.
 */
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expect422, KEY, startTestServer, type TestServer } from "../support/harness.js";
import { exited, spawnServer, type ServerProcess } from "../support/process.js";
import { rawRequest, UPGRADE_HEADERS, type RawReply } from "../support/raw-http.js";

let t: TestServer;
let conversationId: string;

beforeAll(async () => {
  // Short HTTP timeouts so that Node's 408 comes within the test.
  t = await startTestServer([], {}, undefined, { http: { headersTimeout: 500, requestTimeout: 1_000, connectionsCheckingInterval: 100 } });
  const created = await t.call("POST", "/api/conversations", { json: { initial_user_msg: "hello" } });
  conversationId = created.body.conversation_id;
});
afterAll(() => t.close());

/** An answer of the server's own making: JSON with a `detail`. */
function expectJsonDetail(reply: RawReply, status: number): void {
  expect(reply.status, reply.body).toBe(status);
  expect(reply.headers["content-type"]).toMatch(/^application\/json/);
  expect(JSON.parse(reply.body)).toMatchObject({ detail: expect.any(String) });
}

describe("upgrade requests with a malformed target (a spawned server: an uncaught exception would end it)", () => {
  let server: ServerProcess;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "acs-upgrade-"));
    server = await spawnServer(dataDir);
  });
  afterAll(async () => {
    server.process.kill("SIGTERM");
    await exited(server.process);
    await rm(dataDir, { recursive: true, force: true });
  });

  it.each([
    ["//", 404],
    ["/sockets/events/%", 400],
    ["/sockets/events/%E0%A4%A", 400],
    ["/sockets/events/%FF", 400],
    ["/sockets/events/%zz?after_id=1", 400],
    ["http://[::1", 400],
    ["http://[::1]:3000/sockets/events/%", 400],
    ["*", 400],
    ["/nothing/here", 404],
  ] as const)("GET %s → %i in JSON, and the socket is closed", async (target, status) => {
    const reply = await rawRequest(server.url, `GET ${target} HTTP/1.1\r\n${UPGRADE_HEADERS}\r\n`);
    expectJsonDetail(reply, status);
    expect(reply.closedByServer).toBe(true);
    expect(server.process.exitCode).toBeNull();
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  });

  it("an upgrade the WebSocket handshake refuses is answered in JSON too", async () => {
    const reply = await rawRequest(server.url, `GET /sockets/events/${crypto.randomUUID()} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: short\r\n\r\n`);
    expectJsonDetail(reply, 400);
    const method = await rawRequest(server.url, `POST /sockets/events/${crypto.randomUUID()} HTTP/1.1\r\n${UPGRADE_HEADERS}Content-Length: 0\r\n\r\n`);
    expectJsonDetail(method, 405);
    const version = await rawRequest(server.url, `GET /sockets/events/${crypto.randomUUID()} HTTP/1.1\r\n${UPGRADE_HEADERS.replace("Version: 13", "Version: 99")}\r\n`);
    expectJsonDetail(version, 400);
    expect(version.headers["sec-websocket-version"]).toBe("13, 8");
  });
});

describe("errors of Node's HTTP layer have JSON bodies", () => {
  it.each([
    ["a request line that is not HTTP", "FOO\r\n\r\n", 400],
    ["a header line without a colon", "GET /health HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n", 400],
    ["a Content-Length that is not a number", "POST /api/conversations HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400],
    ["a chunk size that is not hexadecimal", `POST /api/settings HTTP/1.1\r\nHost: x\r\nX-Session-API-Key: ${KEY}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`, 400],
    ["headers over 16 KiB", `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`, 431],
    ["headers that never end", "GET /health HTTP/1.1\r\nHost: x\r\n", 408],
  ] as const)("%s → %i", async (_name, bytes, status) => {
    const reply = await rawRequest(t.url, bytes);
    expectJsonDetail(reply, status);
    expect(reply.closedByServer).toBe(true);
  });
});

describe("a malformed percent-escape in a path parameter is a 422 naming the parameter", () => {
  it.each([
    ["GET", "/api/conversations/%/events/search", "searchEvents", "conversation_id"],
    ["GET", "/api/conversations/%E0%A4%A/events/count", "countEvents", "conversation_id"],
    ["GET", "/api/conversations/%zz", "getConversation", "conversation_id"],
    ["POST", "/api/conversations/%/upload-files", "uploadFiles", "conversation_id"],
    ["POST", "/api/conversations/%C0%AF/events", "sendMessage", "conversation_id"],
    ["GET", "/api/conversations/{id}/files/%FF", "downloadFile", "file_name"],
    ["GET", "/api/conversations/{id}/files/a%", "downloadFile", "file_name"],
  ] as const)("%s %s", async (method, route, operationId, name) => {
    const reply = await t.call(method, route.replace("{id}", conversationId));
    expect422(operationId, reply, ["path", name]);
  });

  it("on a path the server does not have: 404", async () => {
    const reply = await t.call("GET", "/api/%/nothing");
    expect(reply.status).toBe(404);
    expect(reply.body).toEqual({ detail: "Not Found" });
  });
});

describe("a body that is not what its Content-Encoding says is a 422", () => {
  const json = Buffer.from(JSON.stringify({ language: "de" }));
  const rows: Array<[string, string, Buffer]> = [];
  for (const [encoding, compress] of [["gzip", gzipSync], ["deflate", deflateSync], ["br", brotliCompressSync]] as const) {
    rows.push([`${encoding}, not compressed`, encoding, json]);
    rows.push([`${encoding}, cut short`, encoding, compress(Buffer.alloc(4096, 32)).subarray(0, 12)]);
  }
  it.each(rows)("%s", async (_name, encoding, body) => {
    const reply = await t.call("POST", "/api/settings", { body: new Uint8Array(body), headers: { "Content-Type": "application/json", "Content-Encoding": encoding } });
    expect422("storeSettings", reply, ["body"]);
  });

  it("a correctly compressed body is read", async () => {
    const reply = await t.call("POST", "/api/settings", { body: new Uint8Array(gzipSync(json)), headers: { "Content-Type": "application/json", "Content-Encoding": "gzip" } });
    expect(reply.status, reply.text).toBe(200);
  });
});

describe("a JSON syntax error: loc holds the character position, nothing of the body is echoed", () => {
  // Positions as FastAPI gives them (Python's json module: characters, not UTF-16 units or bytes).
  it.each([
    ['{"llm_api_key":sk-ant-api03-XYZSECRETXYZ}', 15],
    ['{"llm_api_key":"sk-ant-api03-XYZSECRETXYZ', 15],
    ['{"llm_api_key":"sk-ant-api03-XYZSECRETXYZ" "x":1}', 43],
    ['{"llm_api_key" "sk-ant-api03-XYZSECRETXYZ"}', 15],
    ['{"llm_api_key":"sk-ant-api03-XYZ\\qSECRETXYZ"}', 32],
    ['{"llm_api_key":"sk-ant-api03-XYZSECRETXYZ",}', 43],
    ['{"llm_api_key":"sk-ant-api03-XYZSECRETXYZ"} XYZSECRETXYZ', 44],
    ['{"language":"😀", XYZSECRETXYZ}', 17],
    ['[1,]', 3],
    ['{"a": -}', 6],
    ['nul', 0],
    ['{"a":"x\u0001XYZSECRETXYZ"}', 7],
  ] as const)("%s → position %i", async (body, position) => {
    const reply = await t.call("POST", "/api/settings", { body, headers: { "Content-Type": "application/json" } });
    expect422("storeSettings", reply, ["body", position]);
    expect(reply.body.detail[0].type).toBe("json_invalid");
    expect(reply.text).not.toMatch(/XYZSECRET|sk-ant|😀/);
  });
});

describe("a query string of more than 1,000 parameters is refused, not cut", () => {
  const filler = (n: number) => Array.from({ length: n }, (_, i) => `p${i}=1`).join("&");
  it.each([
    ["limit=0 as parameter 1,001", `${filler(1000)}&limit=0`, ["query", "limit"]],
    ["a valid limit as parameter 1,001", `${filler(1000)}&limit=5`, ["query", "limit"]],
    ["an unknown parameter as parameter 1,001", `${filler(1000)}&zzz=1`, ["query", "zzz"]],
  ] as const)("%s", async (_name, query, loc) => {
    const reply = await t.call("GET", `/api/conversations/${conversationId}/events/search?${query}`);
    expect422("searchEvents", reply, [...loc]);
  });

  it("1,000 parameters are read, all of them", async () => {
    const reply = await t.call("GET", `/api/conversations/${conversationId}/events/count?${filler(999)}&limit=0`);
    expect(reply.status, reply.text).toBe(200);
    const search = await t.call("GET", `/api/conversations/${conversationId}/events/search?${filler(999)}&limit=0`);
    expect422("searchEvents", search, ["query", "limit"]);
  });
});

describe("nesting 5,000 levels deep in a free-form value is a 422, never a 500", () => {
  // Built as text: JSON.stringify itself fails at these depths.
  const deepArray = (levels: number) => "[".repeat(levels) + "]".repeat(levels);
  const deepObject = (levels: number) => '{"a":'.repeat(levels) + "1" + "}".repeat(levels);
  const message = (extra: string) => `{"role":"user","content":[{"type":"text","text":"x"}],"x":${extra}}`;
  const post = (route: string, body: string) => t.call("POST", route, { body, headers: { "Content-Type": "application/json" } });

  it("an unknown property of a user message", async () => {
    const reply = await post(`/api/conversations/${conversationId}/events`, message(deepArray(5_000)));
    expect422("sendMessage", reply, ["body", "x", 0, 0, 0, 0, 0, 0, 0]);
  });

  it("the value of a replayed ConversationStateUpdateEvent", async () => {
    const event = `{"id":"${crypto.randomUUID()}","timestamp":"2026-02-05T11:24:45.290000","source":"environment","key":"x","value":${deepArray(5_000)},"kind":"ConversationStateUpdateEvent"}`;
    const reply = await post("/api/conversations", JSON.stringify({ replay_json: `[${event}]` }));
    expect422("createConversation", reply, ["body", "replay_json", 0, "value", 0, 0, 0, 0, 0, 0, 0]);
  });

  it("objects as deep as arrays, in settings", async () => {
    const reply = await post("/api/settings", `{"language":"de","x":${deepObject(10_000)}}`);
    expect422("storeSettings", reply, ["body", "x", "a", "a", "a", "a", "a", "a", "a"]);
  });

  it("500 levels are accepted", async () => {
    const reply = await post(`/api/conversations/${conversationId}/events`, message(deepArray(500)));
    expect(reply.status, reply.text).toBe(200);
  });
});

describe("afterwards", () => {
  it("no request answered 500, and nothing was logged as an unhandled error", () => {
    expect(t.logs.filter((line) => line.includes('"status":500') || line.includes("unhandled error"))).toEqual([]);
  });

  it("no log line holds a secret sent in a malformed body", () => {
    expect(t.logs.filter((line) => line.includes("XYZSECRET") || line.includes(KEY))).toEqual([]);
  });
});
