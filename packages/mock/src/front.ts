/**
 * Prism at the front. Every request is routed and checked by Prism (prism-http, programmatic, on the
 * bundled spec) before the world sees it:
 *
 * 1. injected latency (`--latency`, `Prefer: latency=200ms`);
 * 2. a route the spec does not have (the docs' assets, an unknown path) or a CORS preflight goes
 *    straight to the world, which answers as the server does (`404 {"detail":"Not Found"}`);
 * 3. Prism's security check → `401 {"detail":"Unauthorized"}` (and a present key is compared with the
 *    accepted ones, so that a wrong key is a 401 before any 422, in the server's order);
 * 4. Prism's request validation → the interface's `422` with the server's `loc` (violations.ts);
 *    a coarse violation, a body that is not JSON, or a multipart body (Prism reads a one-file upload
 *    as a string) is left to the server's own validation behind Prism;
 * 5. `Prefer: code=…`, `example=…`, `dynamic=true`, or an operation the world does not implement:
 *    Prism's mocker answers with the spec's examples or generated data (an undocumented code, such
 *    as `Prefer: code=500`, is answered with that status and `{"detail": <reason>}`);
 * 6. everything else goes to the world (the reference server's Express app), body and all.
 *
 * Prism's problem+json never reaches a client: every answer is in the interface's shapes.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { IncomingMessage, STATUS_CODES, type ServerResponse } from "node:http";
import type { ApiReply } from "@acs-toolkit/server/api";
import { BASE_CONFIG, createValidatingPrism, loadOperations, mockingPrism, responseViolations, type Checked, type IHttpConfig, type IHttpRequest, type IPrismDiagnostic } from "./prism.js";
import { openapiDocument } from "@acs-toolkit/schema/documents";
import { pathEncodingProblem, pathTemplates, writeReply } from "@acs-toolkit/server";
import type { World } from "./world.js";
import { mapViolations } from "./violations.js";
import { describeWorld } from "./describe-world.js";

/** A Node request handler with the mock's extras. */
export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** A request as the front reads it, from any transport (a Node request, a fetch Request). */
export interface FrontRequest {
  method: string;
  /** Path and query, e.g. `/api/conversations/…/events/search?limit=5`. */
  url: string;
  /** By lower-case name. */
  headers: Record<string, string | undefined>;
  /** The request line and headers exactly as received: the key of Prism's first check, when short enough. */
  cacheKey?: string;
  /** Reads the body up to `limit` bytes; past it stops reading and says so (the rest stays unread). */
  readBody(limit: number): Promise<{ chunks: Uint8Array[]; overLimit: boolean }>;
}

/** The front's verdict: an answer of its own (Prism's 401, 422, mocked data), or the world answers. */
export type FrontAnswer = { reply: ApiReply } | { pass: true };

/** Prism in front of a world, without a transport. */
export type Front = (request: FrontRequest) => Promise<FrontAnswer>;

export interface FrontOptions {
  /** Added to every response before it is handled, ms (`--latency`). Default 0. */
  latencyMs?: number;
  /** Largest JSON body read for validation; larger ones go to the server, which answers 413. Default 64 MiB. */
  jsonLimitBytes?: number;
  /** Browser origins allowed by CORS for answers the front gives itself (as the world's). */
  corsOrigins?: string[];
}

/** Preferences of a request (RFC 7240 `Prefer`), the ones Prism knows plus `latency`. */
export interface Preferences {
  code?: string;
  example?: string;
  dynamic?: string;
  seed?: string;
  latency?: string;
}

/** Parses `Prefer: code=404, example="not found", dynamic=true` (also `;`-separated). */
export function parsePrefer(header: string | string[] | undefined): Preferences {
  const out: Record<string, string> = {};
  const text = Array.isArray(header) ? header.join(",") : (header ?? "");
  for (const part of text.split(/[,;]/)) {
    const match = /^\s*([A-Za-z_-]+)\s*(?:=\s*(?:"([^"]*)"|([^\s"]*)))?\s*$/.exec(part);
    if (match) out[match[1]!.toLowerCase()] = match[2] ?? match[3] ?? "true";
  }
  return out;
}

/** `200ms`, `2s`, `1.5s`, `200` (ms) → milliseconds, or undefined when it is none of those. */
export function parseDuration(text: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s)?\s*$/.exec(text);
  if (!match) return undefined;
  return Number(match[1]) * (match[2] === "s" ? 1000 : 1);
}

const isSecurityDiagnostic = (d: IPrismDiagnostic) => d.code === 401;

const digest = (value: string) => createHash("sha256").update(value).digest();

type FirstCheck = Awaited<ReturnType<ReturnType<ReturnType<typeof createValidatingPrism>["request"]>>>;

/** How many first checks a front keeps, and the longest request line and headers it keeps one for. */
const FIRST_CHECKS = 1024;
const FIRST_CHECK_KEY_CHARS = 16 * 1024;

/** The request line and headers exactly as received (header names and values cannot hold a newline). */
function firstCheckKey(req: IncomingMessage): string | undefined {
  const key = `${req.method} ${req.url}\n${req.rawHeaders.join("\n")}`;
  return key.length <= FIRST_CHECK_KEY_CHARS ? key : undefined;
}

/** Builds the front of a world: Prism's checks and mocker, deciding per request whether the world answers. */
export async function createPrismFront(world: World, options: FrontOptions = {}): Promise<Front> {
  const operations = await loadOperations();
  const validating = createValidatingPrism();
  // Prism routes a request by trying every operation's URI template. Handing it only the operations
  // whose method and path pattern can match (all of them when none can, so that its 404/405 stand)
  // leaves its choice the same and saves most of the routing work.
  const patterns = operations.map((operation) => ({
    operation,
    method: operation.method.toLowerCase(),
    path: new RegExp(`^${operation.path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+")}/?$`),
  }));
  const candidatesFor = (method: string, path: string) => {
    const found = patterns.filter((p) => p.method === method && p.path.test(path)).map((p) => p.operation);
    return found.length > 0 ? found : operations;
  };
  const templates = pathTemplates(openapiDocument);
  const acceptedKeys = world.keys.map(digest);
  const keyIsAccepted = (presented: string) => {
    const candidate = digest(presented);
    let match = false;
    for (const key of acceptedKeys) match = timingSafeEqual(key, candidate) || match;
    return presented !== "" && match;
  };
  /**
   * Prism's first check (route, key present, parameters) of requests seen before, by request line
   * and headers: it depends on nothing else (the operations are fixed), and a frontend sends the
   * same request again and again (a page it polls). Bounded: the oldest goes first.
   */
  const firstChecks = new Map<string, FirstCheck>();
  const remember = (key: string, check: FirstCheck) => {
    if (firstChecks.size >= FIRST_CHECKS) firstChecks.delete(firstChecks.keys().next().value!);
    firstChecks.set(key, check);
  };
  const corsOrigins = options.corsOrigins ?? ["*"];
  const jsonLimit = options.jsonLimitBytes ?? 64 * 1024 * 1024;
  const log = world.log;

  const encoder = new TextEncoder();
  /** An answer the front gives itself, in the interface's shape, with the world's CORS headers. */
  const send = (req: FrontRequest, status: number, body: unknown, headers: Record<string, string> = {}, started = performance.now()): FrontAnswer => {
    const origin = req.headers.origin;
    const cors: Record<string, string> = {};
    if (origin && (corsOrigins.includes("*") || corsOrigins.includes(origin))) {
      cors["Access-Control-Allow-Origin"] = corsOrigins.includes("*") ? "*" : origin;
      if (!corsOrigins.includes("*")) cors.Vary = "Origin";
      cors["Access-Control-Expose-Headers"] = "Content-Length, Content-Disposition";
    }
    const text = typeof body === "string" ? body : JSON.stringify(body);
    log.info({ method: req.method, path: req.url.split("?")[0], status, ms: performance.now() - started, by: "prism" }, "request");
    return { reply: { status, headers: { ...cors, "Content-Type": "application/json; charset=utf-8", ...headers }, body: [encoder.encode(text)] } };
  };
  const pass: FrontAnswer = { pass: true };

  return async (req) => {
    const started = performance.now();
    const url = new URL(req.url, "http://mock");
    const prefer = parsePrefer(req.headers.prefer);

    const latency = prefer.latency !== undefined ? parseDuration(prefer.latency) : options.latencyMs;
    if (prefer.latency !== undefined && latency === undefined) {
      return send(req, 422, { detail: [{ loc: ["header", "Prefer"], msg: `latency must be a duration such as 200ms or 2s, got "${prefer.latency}"`, type: "value_error" }] });
    }
    if (latency) await new Promise((resolve) => setTimeout(resolve, Math.min(latency, 60_000)));

    const method = req.method.toLowerCase();
    if (url.pathname === "/__mock" && method === "get") return send(req, 200, describeWorld(world), {}, started);
    // A malformed percent-escape (Prism would fail on it): the server's answer, 422 naming the parameter.
    if (pathEncodingProblem(templates, method, url.pathname)) return pass;
    let built: IHttpRequest | undefined;
    const inputOf = (): IHttpRequest => {
      if (built) return built;
      const query: Record<string, string | string[]> = {};
      for (const name of new Set(url.searchParams.keys())) {
        const values = url.searchParams.getAll(name);
        query[name] = values.length === 1 ? values[0]! : values;
      }
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers[name] = value;
      return (built = { method: method as IHttpRequest["method"], url: { path: url.pathname, query }, headers });
    };

    // Route, check the key and validate what has arrived so far (everything but a JSON body): Prism's
    // answer for this request line and these headers, or the one it gave before for the same.
    const candidates = candidatesFor(method, url.pathname);
    const key = req.cacheKey;
    let first = key === undefined ? undefined : firstChecks.get(key);
    if (!first) {
      first = await validating.request(inputOf(), candidates)();
      if (key !== undefined) remember(key, first);
    }
    if (first._tag === "Left") return pass; // not in the spec: the world's 404, the docs' assets
    const { resource, validations: found } = first.right.output.body as Checked;

    // The key: Prism checks that it is there; its value is compared as the server does.
    const alternatives = resource.security ?? [];
    const optional = alternatives.some((alternative) => alternative.length === 0);
    const needsKey = alternatives.some((alternative) => alternative.length > 0) && (!optional || !world.publicRead);
    const presented = req.headers["x-session-api-key"];
    if (found.some(isSecurityDiagnostic) || (needsKey && !keyIsAccepted(typeof presented === "string" ? presented : ""))) {
      return send(req, 401, { detail: "Unauthorized" }, {}, started);
    }

    let validations = found.filter((d) => !isSecurityDiagnostic(d) && d.severity === 0);
    let raw: Buffer | undefined;
    const contents = resource.request?.body?.contents ?? [];
    const jsonOperation = contents.some((c) => c.mediaType === "application/json");
    if (jsonOperation && method !== "get" && method !== "head") {
      const read = await req.readBody(jsonLimit);
      if (read.overLimit) return pass; // the server's 413
      raw = Buffer.concat(read.chunks);
      if (raw.length > 0) {
        const input = inputOf();
        if (/^application\/(?:[\w.+-]*\+)?json\b/i.test(String(req.headers["content-type"] ?? ""))) {
          try {
            input.body = JSON.parse(raw.toString("utf8"));
          } catch {
            // Not JSON: the server names the position of the mistake (["body", 21]); Prism cannot.
            return pass;
          }
        } else input.body = raw.toString("utf8");
        const checked = await validating.request(input, candidates)();
        validations = checked._tag === "Right" ? (checked.right.output.body as Checked).validations.filter((d) => !isSecurityDiagnostic(d) && d.severity === 0) : validations;
      }
    } else if (contents.length > 0) {
      // Multipart: Prism reads a one-file upload as a string, not an array; the body is the server's.
      validations = validations.filter((d) => d.path?.[0] !== undefined && d.path[0] !== "body");
    }
    if (validations.length > 0) {
      const mapped = mapViolations(validations, built?.body);
      if (mapped.precise) return send(req, 422, { detail: mapped.detail }, {}, started);
      log.debug({ reason: mapped.reason }, "coarse Prism violation: the server's validation answers");
      return pass;
    }

    const implemented = world.routes.has(`${resource.method.toUpperCase()} ${resource.path}`);
    if (prefer.code === undefined && prefer.example === undefined && prefer.dynamic !== "true" && implemented) return pass;

    const answer = await mockedAnswer(resource, inputOf(), prefer, String(world.seed));
    return send(req, answer.status, answer.body, answer.headers, started);
  };
}

type Resource = Checked["resource"];

/**
 * Prism's mocker for a request the world does not answer (a `Prefer` asks for it, or an operation
 * the world lacks): the spec's examples or generated data, an undocumented `code` as a failure in
 * the server's error shape, a bad `Prefer` as a 422.
 */
async function mockedAnswer(resource: Resource, input: IHttpRequest, prefer: Preferences, worldSeed: string): Promise<{ status: number; body: unknown; headers?: Record<string, string> }> {
  const preferError = (msg: string) => ({ status: 422, body: { detail: [{ loc: ["header", "Prefer"], msg, type: "value_error" }] } });
  let code: number | undefined;
  if (prefer.code !== undefined) {
    if (!/^[1-5]\d\d$/.test(prefer.code)) return preferError(`code must be an HTTP status code, got "${prefer.code}"`);
    code = Number(prefer.code);
    // An undocumented status: failure injection (`Prefer: code=500`), in the server's error shape.
    if (!resource.responses.some((r) => r.code === prefer.code)) return { status: code, body: { detail: STATUS_CODES[code] ?? "Error" } };
  }
  const mock = (dynamic: boolean, seed: string) =>
    mockingPrism().request(input, [resource], {
      ...BASE_CONFIG,
      checkSecurity: false,
      validateRequest: false,
      mock: { dynamic, code, exampleKey: prefer.example, seed },
    } as IHttpConfig)();
  const seed = prefer.seed ?? worldSeed;
  let mocked = await mock(prefer.dynamic === "true", seed);
  if (prefer.dynamic === "true" && mocked._tag === "Right") {
    // Prism's generator ignores some keywords (propertyNames, exclusiveMinimum): what it makes is
    // checked, other seeds derived from this one are tried, and the example is the fallback, so a
    // generated answer is always one the spec allows.
    for (let attempt = 1; mocked._tag === "Right" && responseViolations(resource, mocked.right.output).length > 0; attempt++) {
      mocked = attempt <= 8 ? await mock(true, `${seed}:${attempt}`) : await mock(false, seed);
      if (attempt > 8) break;
    }
  }
  if (mocked._tag === "Left") {
    const error = mocked.left as Error & { detail?: string };
    return preferError(error.detail ?? error.message);
  }
  const output = mocked.right.output;
  const mediaType = Object.entries(output.headers ?? {}).find(([name]) => name.toLowerCase() === "content-type")?.[1] ?? "application/json";
  const body = typeof output.body === "string" && !/json/.test(mediaType) ? output.body : JSON.stringify(output.body ?? null);
  return { status: output.statusCode, body, headers: { "Content-Type": mediaType } };
}

/**
 * The front as a Node handler (the `acs-mock` server): Prism decides, and the world's Node app
 * answers what passes, given the body the front read and whatever of it is still unread.
 */
export async function createFront(world: World, options: FrontOptions = {}): Promise<NodeHandler> {
  return frontHandler(world, await createPrismFront(world, options));
}

/** `front` as a Node handler over `world` (see {@link createFront}). */
export function frontHandler(world: World, front: Front): NodeHandler {
  return (req, res) => {
    let read: { chunks: Uint8Array[]; overLimit: boolean } | undefined;
    const headers: Record<string, string | undefined> = {};
    for (const [name, value] of Object.entries(req.headers)) headers[name] = Array.isArray(value) ? value.join(", ") : value;
    const request: FrontRequest = {
      method: req.method ?? "GET",
      url: req.url ?? "/",
      headers,
      cacheKey: firstCheckKey(req),
      readBody: async (limit) => (read = await readBody(req, limit)),
    };
    front(request).then(
      (answer) => {
        if ("reply" in answer) return writeReply(res, answer.reply);
        world.app(read ? replay(req, read.chunks as Buffer[], read.overLimit ? req : undefined) : req, res);
      },
      (error: unknown) => {
        world.log.error({ err: error, method: req.method, url: req.url?.split("?")[0] }, "mock front failed");
        if (!res.headersSent) {
          res.writeHead(500, { "Content-Type": "application/json" });
          res.end(JSON.stringify({ detail: "Internal Server Error" }));
        } else res.destroy();
      },
    );
  };
}


/** Reads a body up to `limit` bytes; past it stops reading and says so (the rest stays in `req`). */
function readBody(req: IncomingMessage, limit: number): Promise<{ chunks: Buffer[]; overLimit: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size > limit) {
        req.off("data", onData);
        req.off("end", onEnd);
        req.pause();
        resolve({ chunks, overLimit: true });
      }
    };
    const onEnd = () => resolve({ chunks, overLimit: false });
    req.on("data", onData);
    req.once("end", onEnd);
    req.once("error", reject);
  });
}

/**
 * A request the world can read again: the same method, URL and headers, the body read so far, then
 * whatever is still in `rest` (the server's body parser reads it as if nothing had happened).
 */
function replay(original: IncomingMessage, chunks: Buffer[], rest?: IncomingMessage): IncomingMessage {
  const copy = new IncomingMessage(original.socket!);
  copy.method = original.method;
  copy.url = original.url;
  copy.httpVersion = original.httpVersion;
  copy.httpVersionMajor = original.httpVersionMajor;
  copy.httpVersionMinor = original.httpVersionMinor;
  copy.headers = original.headers;
  copy.rawHeaders = original.rawHeaders;
  for (const chunk of chunks) copy.push(chunk);
  // `complete` as Node's parser sets it: without it, the copy's end counts as an abort, which
  // destroys the connection.
  if (rest) {
    rest.on("data", (chunk: Buffer) => copy.push(chunk));
    rest.once("end", () => {
      copy.complete = true;
      copy.push(null);
    });
    rest.resume();
  } else {
    copy.complete = true;
    copy.push(null);
  }
  return copy;
}
