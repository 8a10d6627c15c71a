/**
 * What the fuzzer sends, as fast-check arbitraries (seeded, shrinkable): for every operation of
 * the bundled OpenAPI document, requests whose path, query, headers and body take valid, boundary
 * and hostile values; malformed HTTP on a raw socket; upgrade requests with hostile targets; and
 * WebSocket frames (invalid JSON, huge, binary, floods).
 */
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { openapiDocument } from "@acs-toolkit/schema/documents";
import { exampleEvents } from "@acs-toolkit/schema/examples";

export interface HttpCase {
  kind: "http";
  method: string;
  /** Path and query, as sent (not re-encoded). */
  target: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}
export interface RawCase {
  kind: "raw";
  /** Bytes sent on a fresh connection, latin1. */
  bytes: string;
}
export interface WsCase {
  kind: "ws";
  target: string;
  frames: Array<{ binary: boolean; data: string }>;
}
export type FuzzCase = HttpCase | RawCase | WsCase;

/** What the generator knows of the target's state. */
export interface FuzzWorld {
  conversationId: string;
  fileName: string;
  /** Names in the conversation's workspace that an agent could have made: a FIFO, a socket, links out, a folder. */
  hostileNames?: string[];
  key: string;
}

type Json = Record<string, unknown>;

const HOSTILE = [
  "", " ", "%", "%%", "%FF", "%E0%A4%A", "%C0%AF", "%00", "..", "../../etc/passwd", "..%2F..%2Fetc", "/", "\\", "a/b",
  "NaN", "-1", "0", "1e309", "99999999999999999999", "null", "true", "[]", "{}", "'", '"', "<script>", "😀", "\u202E", "\u200B",
  "x".repeat(2_000), "%".repeat(300), "ActionEvent.x", "openhands.sdk.event.MessageEvent", "2026-13-45T99:99:99", "TIMESTAMP_DESC",
];
const hostile = fc.oneof(fc.constantFrom(...HOSTILE), fc.string({ maxLength: 40 }), fc.string({ unit: "binary", maxLength: 20 }));

/** Percent-encodes, or (sometimes) sends the value as it is: malformed escapes on purpose. */
const encode = (text: string) => {
  try {
    return encodeURIComponent(text);
  } catch {
    return "%EF%BF%BD"; // a lone surrogate
  }
};
const encoded = (value: fc.Arbitrary<string>) =>
  fc.tuple(value, fc.boolean()).map(([v, raw]) => (raw ? v.replace(/[^\u0021-\u007e]|[#?&=/]/gu, encode) : encode(v)));

function resolve<T>(node: T | { $ref: string }): T {
  if (typeof node === "object" && node !== null && "$ref" in node) {
    return node.$ref.slice(2).split("/").reduce<unknown>((at, token) => (at as Json)[token], openapiDocument) as T;
  }
  return node as T;
}

/** Valid and boundary values of a parameter's schema, then hostile ones. */
function valueOf(name: string, schema: Json, world: FuzzWorld): fc.Arbitrary<string> {
  const s = resolve(schema) as Json;
  const options: Array<fc.Arbitrary<string>> = [];
  if (name === "conversation_id") options.push(fc.constantFrom(world.conversationId, world.conversationId.replace(/-/g, "").toUpperCase(), UNKNOWN_ID));
  if (name === "file_name") options.push(fc.constantFrom(world.fileName, "missing.txt", "FUZZ.TXT", ...(world.hostileNames ?? [])));
  if (Array.isArray(s.enum)) options.push(fc.constantFrom(...(s.enum as string[])));
  if (s.type === "integer") {
    const min = Number(s.minimum ?? 0);
    const max = Number(s.maximum ?? 1000);
    options.push(fc.constantFrom(min, max, min - 1, max + 1).map(String), fc.integer({ min, max }).map(String));
  }
  if (name === "kind") options.push(fc.constantFrom("ActionEvent", "MessageEvent", "openhands.sdk.event.llm_convertible.message.MessageEvent", "PauseEvent", "FooEvent"));
  if (name === "source") options.push(fc.constantFrom("agent", "user", "environment"));
  if (name.startsWith("timestamp")) options.push(fc.date({ min: new Date(2020, 0, 1), max: new Date(2030, 0, 1), noInvalidDate: true }).map((d) => d.toISOString()));
  if (name === "body") options.push(fc.constantFrom("the", "e", "zz", "a".repeat(1_000), "a".repeat(1_001), '"AND NEAR(*'));
  if (name === "page_id") options.push(fc.constantFrom("eyJ4IjoxfQ.AAAA", "a.b.c"));
  options.push(hostile);
  return fc.oneof(...options);
}

interface Operation {
  method: string;
  path: string;
  parameters: Array<{ name: string; in: string; schema: Json }>;
  bodyType?: string;
  operationId: string;
}

const operations: Operation[] = Object.entries(openapiDocument.paths as Record<string, Record<string, Json>>).flatMap(([path, item]) =>
  Object.entries(item).map(([method, op]) => ({
    method: method.toUpperCase(),
    path,
    operationId: String(op.operationId),
    parameters: ((op.parameters as unknown[]) ?? []).map((p) => resolve(p as Json) as { name: string; in: string; schema: Json }),
    bodyType: Object.keys((resolve((op.requestBody as Json) ?? {}) as { content?: Json }).content ?? {})[0],
  })),
);

/** A conversation id that no conversation has. */
const UNKNOWN_ID = "00000000-0000-4000-8000-00000000f022";
const events = exampleEvents({ seed: 5 });
const replay = (mutate: number) => {
  const list = events.map((e) => ({ ...e })) as Array<Json>;
  if (mutate === 1) list[2] = { ...list[2], kind: "NoSuchEvent" };
  if (mutate === 2) list[3] = { ...list[3], id: list[1]!.id };
  if (mutate === 3) list[4] = { ...list[4], timestamp: "yesterday" };
  return list.map((e) => JSON.stringify(e)).join("\n");
};
const deep = (levels: number, open = "[", close = "]") => open.repeat(levels) + close.repeat(levels);

/** JSON bodies: the operation's valid shapes, then broken, deep, huge and foreign ones. */
function bodyOf(op: Operation): fc.Arbitrary<{ body?: string | Uint8Array; headers: Record<string, string> }> {
  const json = (value: unknown) => ({ body: JSON.stringify(value), headers: { "Content-Type": "application/json" } });
  const text = (body: string, type = "application/json") => ({ body, headers: { "Content-Type": type } });
  const valid: Record<string, fc.Arbitrary<unknown>> = {
    createConversation: fc.oneof(
      fc.constant({}),
      fc.record({ initial_user_msg: fc.string({ maxLength: 50 }) }),
      fc.integer({ min: 0, max: 3 }).map((m) => ({ replay_json: replay(m) })),
      fc.record({ conversation_id: fc.constantFrom(UNKNOWN_ID, "abc", ""), git_provider: fc.constantFrom("github", "sourcehut", null) }),
    ),
    storeSettings: fc.oneof(
      fc.record({ language: fc.string({ maxLength: 10 }), llm_api_key: fc.constantFrom("sk-ant-SECRET", null, ""), max_iterations: fc.integer({ min: -5, max: 500 }) }),
      fc.constant({ mcp_config: { stdio_servers: [{ name: "gh", command: "npx", env: { TOKEN: "ghp_SECRET" } }] } }),
      fc.constant({ mcp_config: { stdio_servers: [{ name: "x" }] } }),
    ),
    addGitProviders: fc.oneof(fc.constant({ provider_tokens: { github: { token: "ghp_SECRET", host: "github.com" } } }), fc.constant({ provider_tokens: { sourcehut: { token: "x" } } })),
    sendMessage: fc.oneof(
      fc.record({ role: fc.constantFrom("user", "assistant"), content: fc.constant([{ type: "text", text: "hello" }]) }),
      fc.constant({ role: "user", content: [{ type: "text" }] }),
    ),
  };
  const options: Array<fc.Arbitrary<{ body?: string | Uint8Array; headers: Record<string, string> }>> = [
    (valid[op.operationId] ?? fc.constant({})).map(json),
    fc.jsonValue({ maxDepth: 4 }).map(json),
    fc.constantFrom(
      '{"llm_api_key":sk-ant-SECRET}', '{"a": }', "[1,]", "nul", '{"a":"\\q"}', "", " ", "\uFEFF{}", '{"a":1}{"b":2}',
      `{"x":${deep(6_000)}}`, `{"role":"user","content":[],"x":${deep(5_000, '{"a":', "}").replace(/\{"a":\}/, '{"a":1}')}}`,
      `{"replay_json":"${"x".repeat(300_000)}"}`,
    ).map((t) => text(t)),
    fc.constantFrom("text/plain", "application/x-www-form-urlencoded", "application/json; charset=latin1", "application/merge-patch+json").map((type) => text("{}", type)),
    fc.constantFrom("gzip", "deflate", "br", "compress", "gzip, gzip").map((encoding) => ({ body: "{}", headers: { "Content-Type": "application/json", "Content-Encoding": encoding } })),
    fc.constant({ body: new Uint8Array(gzipSync(JSON.stringify({ initial_user_msg: "zipped" }))), headers: { "Content-Type": "application/json", "Content-Encoding": "gzip" } }),
    fc.constant({ headers: {} }),
  ];
  if (op.bodyType === "multipart/form-data") {
    const boundary = "fuzzboundary";
    options.push(
      fc.array(fc.oneof(fc.constantFrom("a.txt", "A.TXT", "../x", "z\u200B.txt", "CON", ".acs-upload-x.part", "", "x".repeat(300)), fc.string({ maxLength: 12 })), { minLength: 0, maxLength: 4 }).map((names) => ({
        body: names.map((name) => `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="${name.replace(/["\r\n]/g, "_")}"\r\n\r\ndata\r\n`).join("") + `--${boundary}--\r\n`,
        headers: { "Content-Type": `multipart/form-data; boundary=${boundary}` },
      })),
      fc.constant({ body: `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="cut.txt"\r\n\r\nno end`, headers: { "Content-Type": `multipart/form-data; boundary=${boundary}` } }),
    );
  }
  return fc.oneof(...options);
}

function httpCase(op: Operation, world: FuzzWorld): fc.Arbitrary<HttpCase> {
  const pathParams = op.parameters.filter((p) => p.in === "path");
  const queryParams = op.parameters.filter((p) => p.in === "query");
  const path = fc.tuple(...pathParams.map((p) => encoded(valueOf(p.name, p.schema, world)))).map((values) =>
    pathParams.reduce((at, p, i) => at.replace(`{${p.name}}`, values[i] || "x"), op.path),
  );
  const query = fc.oneof(
    { weight: 8, arbitrary: fc.subarray(queryParams).chain((chosen) => fc.tuple(...chosen.map((p) => encoded(valueOf(p.name, p.schema, world)).map((v) => `${p.name}=${v}`)))).map((pairs) => pairs.join("&")) },
    { weight: 1, arbitrary: fc.constantFrom("limit=1&limit=2", `${Array.from({ length: 1_000 }, (_, i) => `p${i}=1`).join("&")}&limit=0`, "a=%&b=%zz", "&&&=&") },
  );
  const auth = fc.constantFrom<Record<string, string>>({ "X-Session-API-Key": world.key }, { "X-Session-API-Key": world.key }, {}, { "X-Session-API-Key": "wrong" }, { "X-Session-API-Key": "" });
  const body: fc.Arbitrary<{ body?: string | Uint8Array; headers: Record<string, string> }> = op.method === "GET" ? fc.constant({ headers: {} }) : bodyOf(op);
  return fc.tuple(path, query, auth, body, fc.constantFrom(op.method, op.method, op.method, "HEAD", "PUT", "OPTIONS")).map(([p, q, a, b, method]) => ({
    kind: "http" as const,
    method,
    target: q ? `${p}?${q}` : p,
    headers: { ...a, ...b.headers },
    ...(b.body !== undefined && method !== "GET" && method !== "HEAD" && { body: b.body }),
  }));
}

const RAW = [
  "FOO\r\n\r\n",
  "GET / HTTP/9.9\r\n\r\n",
  "GET /health HTTP/1.1\r\nHost: x\r\nNo colon\r\n\r\n",
  `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
  "POST /api/conversations HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
  "POST /api/conversations HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
  "POST /api/conversations HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
  "POST /api/settings HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"a\":",
  "GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\n\r\n",
  "GET http://[::1 HTTP/1.1\r\nHost: x\r\n\r\n",
  "\x00\x01\x02\x03\r\n\r\n",
];
const UPGRADE_TARGETS = ["//", "/sockets/events/%", "/sockets/events/%E0%A4%A", "/sockets/events/%FF", "http://[::1", "*", "/sockets/events/x/y", "/sockets/events/..", "/api/settings"];

function rawCase(world: FuzzWorld): fc.Arbitrary<RawCase> {
  const upgrade = fc
    .tuple(fc.oneof(fc.constantFrom(...UPGRADE_TARGETS), fc.constant(`/sockets/events/${world.conversationId}`)), fc.constantFrom("13", "8", "99", ""), fc.constantFrom("dGhlIHNhbXBsZSBub25jZQ==", "short", ""), fc.constantFrom("GET", "POST"))
    .map(([target, version, key, method]) => `${method} ${target} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: ${version}\r\nSec-WebSocket-Key: ${key}\r\nX-Session-API-Key: ${world.key}\r\n\r\n`);
  return fc.oneof(fc.constantFrom(...RAW), upgrade, fc.string({ unit: "binary", maxLength: 200 }).map((s) => `${s}\r\n\r\n`)).map((bytes) => ({ kind: "raw" as const, bytes }));
}

function wsCase(world: FuzzWorld): fc.Arbitrary<WsCase> {
  const frame = fc.oneof(
    fc.constantFrom("not json", '{"role":"user","content":sk-SECRET}', '{"type":"auth","session_api_key":"wrong"}', `{"x":${deep(6_000)}}`, "[]", "null", '{"role":"user","content":[{"type":"text","text":"hi"}]}').map((data) => ({ binary: false, data })),
    fc.jsonValue({ maxDepth: 3 }).map((v) => ({ binary: false, data: JSON.stringify(v) })),
    fc.string({ unit: "binary", maxLength: 64 }).map((data) => ({ binary: true, data })),
    fc.constant({ binary: false, data: "x".repeat(1024 * 1024) }),
  );
  const target = fc.constantFrom(`/sockets/events/${world.conversationId}`, `/sockets/events/${world.conversationId}?resend_all=true`, `/sockets/events/${world.conversationId}?after_id=nope`, `/sockets/events/${UNKNOWN_ID}`);
  const flood = fc.constantFrom("not json", "[]", '{"role":"user"}').map((data) => Array.from({ length: 200 }, () => ({ binary: false, data })));
  const frames = fc.oneof(fc.array(frame, { maxLength: 5 }), flood);
  return fc.tuple(target, frames).map(([t, f]) => ({ kind: "ws" as const, target: t, frames: f }));
}

/** Every case the fuzzer sends: mostly operations of the spec, then raw HTTP and WebSocket. */
export function fuzzCase(world: FuzzWorld): fc.Arbitrary<FuzzCase> {
  return fc.oneof(
    { weight: 85, arbitrary: fc.oneof(...operations.map((op) => httpCase(op, world))) },
    { weight: 10, arbitrary: rawCase(world) },
    { weight: 5, arbitrary: wsCase(world) },
  );
}

/** A case as one line a person can run again (curl, printf | nc, or the WebSocket frames). */
export function reproduction(c: FuzzCase, base: string): string {
  const cut = (text: string) => (text.length > 300 ? `${text.slice(0, 300)}…(${text.length} characters)` : text);
  const quote = (text: string) => `'${cut(text).replace(/'/g, "'\\''")}'`;
  if (c.kind === "http") {
    const headers = Object.entries(c.headers).map(([k, v]) => `-H ${quote(`${k}: ${v}`)}`).join(" ");
    const body = c.body === undefined ? "" : ` --data-binary ${typeof c.body === "string" ? quote(c.body) : `<${c.body.length} bytes>`}`;
    return `curl --path-as-is -X ${c.method} ${quote(base + c.target)} ${headers}${body}`;
  }
  const { hostname, port } = new URL(base);
  if (c.kind === "raw") return `printf %s ${quote(JSON.stringify(c.bytes).slice(1, -1))} | nc ${hostname} ${port}`;
  return `websocket ${base.replace(/^http/, "ws")}${c.target} frames: ${cut(JSON.stringify(c.frames.map((f) => (f.binary ? `<binary ${f.data.length}>` : cut(f.data)))))}`;
}
