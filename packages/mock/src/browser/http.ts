/**
 * The HTTP side of the browser mock: MSW `http` handlers answering from the browser world as the
 * reference server answers (routes/events.ts, routes/conversations.ts, routes/settings.ts): the same shapes, paging
 * order, 401 and 404 details, and a 422 naming the culprit's `loc` for bad input. Conversations are
 * created, read and sent messages through the server's core (`ConversationCore`), as the server's
 * routes do; the checks of the parameters of the operations served here are written out (the Node
 * mock has Prism check everything against the spec; Prism does not run in a browser).
 */
import { http, HttpResponse, type HttpHandler } from "msw";
import { PROVIDER_TYPES, SETTINGS_FIELDS, SETTINGS_PROPERTIES, type ConversationCreateRequest, type ConversationCreateResponse, type EventKind, type EventSource, type ValidationError } from "@acs-toolkit/schema";
import { canonicalConversationId, checkUserMessage, HttpError, RequestValidationError } from "@acs-toolkit/server/core";
import { ConversationNotFoundError, requireConversation, type Position, type SearchFilters } from "@acs-toolkit/server/store";
import { instantError, instantMicros, kindShortName } from "@acs-toolkit/validator";
import { describeWorld } from "../describe-world.js";
import type { BrowserWorld } from "./world.js";

type Detail = ValidationError[];

/** The store document of the settings (the server's name). */
const SETTINGS_DOCUMENT = "settings";

const KIND = /^(?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Za-z_][A-Za-z0-9_]*$/;
const SOURCES: readonly EventSource[] = ["agent", "user", "environment"];

/** The 422 of the interface: `{"detail": [{loc, msg, type}]}`. */
const invalid = (detail: Detail) => HttpResponse.json({ detail }, { status: 422 });
const failure = (status: number, detail: string, headers: Record<string, string> = {}) => HttpResponse.json({ detail }, { status, headers });

/** Answers the errors every route may throw as the server's error handler does (http/errors.ts). */
async function answering(run: () => Promise<Response>): Promise<Response> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof RequestValidationError) return invalid(error.detail);
    if (error instanceof ConversationNotFoundError) return failure(404, error.message);
    if (error instanceof HttpError) return failure(error.status, error.detail, error.headers);
    console.error("acs-mock: unexpected failure", error);
    return failure(500, "Internal Server Error");
  }
}

/** Opaque page cursors: what the server's carry (conversation, order, position), unsigned (a mock has no secret to keep). */
const cursors = {
  encode(conversationId: string, order: "asc" | "desc", position: Position): string {
    return btoa(JSON.stringify([1, conversationId, order, position.ts, position.seq])).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  },
  decode(conversationId: string, order: "asc" | "desc", cursor: string): { position: Position } | { reason: string } {
    const notACursor = { reason: "is not a page cursor issued by this server" };
    let fields: unknown;
    try {
      fields = JSON.parse(atob(cursor.replace(/-/g, "+").replace(/_/g, "/")));
    } catch {
      return notACursor;
    }
    const [version, id, issuedFor, ts, seq] = Array.isArray(fields) ? fields : [];
    if (version !== 1 || typeof ts !== "number" || typeof seq !== "number") return notACursor;
    if (id !== conversationId) return { reason: "belongs to another conversation" };
    if (issuedFor !== order) return { reason: `was issued for sort_order ${issuedFor === "asc" ? "TIMESTAMP" : "TIMESTAMP_DESC"}` };
    return { position: { ts, seq } };
  },
};

/** The conversation id of a path, or a 422 at `["path", "conversation_id"]`. */
function pathId(raw: string | readonly string[] | undefined): string {
  const id = typeof raw === "string" ? canonicalConversationId(raw) : undefined;
  if (id === undefined) throw new RequestValidationError([{ loc: ["path", "conversation_id"], msg: "must be a UUID", type: "uuid_parsing" }]);
  return id;
}

/** The filters of search and count (`kind`, `source`, `body`, `timestamp__gte`, `timestamp__lt`), checked as the spec declares them. */
function filtersOf(query: URLSearchParams, detail: Detail): SearchFilters {
  const filters: SearchFilters = {};
  const kind = query.get("kind");
  if (kind !== null) {
    if (kind.length > 256 || !KIND.test(kind)) detail.push({ loc: ["query", "kind"], msg: "must be an event kind name (short, or a fully qualified module.ClassName path)", type: "string_pattern_mismatch" });
    else filters.kind = kindShortName(kind) as EventKind;
  }
  const source = query.get("source");
  if (source !== null) {
    if (!SOURCES.includes(source as EventSource)) detail.push({ loc: ["query", "source"], msg: `must be one of: ${SOURCES.join(", ")}`, type: "enum" });
    else filters.source = source as EventSource;
  }
  const body = query.get("body");
  if (body !== null) {
    if (body.length > 1000) detail.push({ loc: ["query", "body"], msg: "must be at most 1000 characters", type: "string_too_long" });
    else if (body !== "") filters.body = body;
  }
  for (const [name, key] of [["timestamp__gte", "timestampGte"], ["timestamp__lt", "timestampLt"]] as const) {
    const text = query.get(name);
    if (text === null) continue;
    const micros = instantMicros(text);
    if (micros === undefined) detail.push({ loc: ["query", name], msg: `must be ${instantError(text)}`, type: "datetime_parsing" });
    else filters[key] = micros;
  }
  return filters;
}

/** A JSON body, or a 422 at `["body"]` naming where it is broken. */
async function jsonBody(request: Request): Promise<unknown> {
  const text = await request.text();
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new RequestValidationError([{ loc: ["body"], msg: `is not valid JSON: ${(error as Error).message}`, type: "json_invalid" }]);
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** The settings as the browser world stores them: the scalar fields (secrets in clear: never returned) and the provider tokens. */
interface BrowserSettings {
  fields: Record<string, string | number | boolean | null>;
  providerTokens: Record<string, { token: string | null; host: string | null; user_id: string | null }>;
}

const SCALAR_TYPES = { string: ["a string", "string_type"], number: ["a number", "float_type"], integer: ["an integer", "int_type"], boolean: ["a boolean", "bool_type"] } as const;

/**
 * The next stored settings after a `POST /api/settings` body, as the server merges them
 * (settings.ts: storeSettings): a field absent or null takes its default, or keeps its stored
 * value when the spec marks it `x-keep-when-null`; `""` clears a secret; provider tokens merge by
 * provider, a token not sent is kept. `mcp_config` is not stored by the browser mock.
 * @throws RequestValidationError
 */
function nextSettings(previous: BrowserSettings | undefined, body: unknown): BrowserSettings {
  if (!isObject(body)) throw new RequestValidationError([{ loc: ["body"], msg: "must be an object", type: "model_attributes_type" }]);
  const detail: Detail = [];
  const fields: BrowserSettings["fields"] = {};
  for (const [name, field] of Object.entries(SETTINGS_FIELDS)) {
    const value = body[name];
    const [expected, type] = SCALAR_TYPES[field.type];
    const fits = value == null || (field.type === "string" ? typeof value === "string" : field.type === "boolean" ? typeof value === "boolean" : typeof value === "number" && Number.isFinite(value) && (field.type === "number" || Number.isInteger(value)));
    if (!fits) {
      detail.push({ loc: ["body", name], msg: `must be ${expected} or null`, type });
      continue;
    }
    if (value == null) fields[name] = field.keepWhenNull ? (previous?.fields[name] ?? field.default) : field.default;
    else fields[name] = field.secret && value === "" ? null : (value as string | number | boolean);
  }
  if (body.mcp_config != null) detail.push({ loc: ["body", "mcp_config"], msg: "is not supported by the browser mock (use the Node mock)", type: "value_error" });
  const providerTokens = { ...previous?.providerTokens };
  const secretsStore = body.secrets_store;
  if (secretsStore != null) {
    const tokens = isObject(secretsStore) ? secretsStore.provider_tokens : undefined;
    if (!isObject(secretsStore)) detail.push({ loc: ["body", "secrets_store"], msg: "must be an object or null", type: "model_type" });
    else if (tokens != null && !isObject(tokens)) detail.push({ loc: ["body", "secrets_store", "provider_tokens"], msg: "must be an object", type: "dict_type" });
    else if (tokens != null) {
      for (const [provider, entry] of Object.entries(tokens)) {
        const where = ["body", "secrets_store", "provider_tokens", provider];
        if (!(PROVIDER_TYPES as readonly string[]).includes(provider)) detail.push({ loc: where, msg: `must be one of ${PROVIDER_TYPES.join(", ")}`, type: "enum" });
        else if (!isObject(entry)) detail.push({ loc: where, msg: "must be an object", type: "model_type" });
        else {
          const text = (name: string) => {
            const value = entry[name];
            if (value != null && typeof value !== "string") detail.push({ loc: [...where, name], msg: "must be a string or null", type: "string_type" });
            return typeof value === "string" ? value : null;
          };
          const token = text("token");
          const host = text("host");
          const userId = text("user_id");
          const kept = previous?.providerTokens[provider];
          providerTokens[provider] = { token: token || kept?.token || null, host, user_id: userId ?? (token ? null : (kept?.user_id ?? null)) };
        }
      }
    }
  }
  if (detail.length) throw new RequestValidationError(detail);
  return { fields, providerTokens };
}

/** What `GET /api/settings` answers (settings.ts: settingsView): every field, secrets null with a `<name>_set` flag. */
function settingsView(stored: BrowserSettings): Record<string, unknown> {
  const view: Record<string, unknown> = {};
  for (const name of SETTINGS_PROPERTIES) {
    const field = (SETTINGS_FIELDS as Record<string, { secret: boolean }>)[name];
    view[name] = field && !field.secret ? (stored.fields[name] ?? null) : null;
  }
  for (const [name, field] of Object.entries(SETTINGS_FIELDS)) if (field.secret) view[`${name}_set`] = stored.fields[name] != null;
  view.provider_tokens_set = Object.fromEntries(PROVIDER_TYPES.flatMap((provider) => (stored.providerTokens[provider]?.token ? [[provider, stored.providerTokens[provider]!.host]] : [])));
  return view;
}

/**
 * The HTTP handlers of the browser mock, under `base` (an origin with an optional path prefix, or
 * `*` for any origin).
 */
export function browserHttpHandlers(world: BrowserWorld, base: string): HttpHandler[] {
  const { store, conversations } = world;
  const at = (path: string) => `${base === "*" ? "*" : base.replace(/\/+$/, "")}${path}`;
  const authorized = (request: Request) => world.keys.includes(request.headers.get("x-session-api-key") ?? "");
  const unauthorized = () => failure(401, "Unauthorized");
  let settingsWrites: Promise<unknown> = Promise.resolve();

  return [
    http.get(at("/api/conversations/:conversation_id/events/search"), ({ request, params }) =>
      answering(async () => {
        if (!world.publicRead && !authorized(request)) return unauthorized();
        const query = new URL(request.url).searchParams;
        const detail: Detail = [];
        const raw = params.conversation_id;
        const id = typeof raw === "string" ? canonicalConversationId(raw) : undefined;
        if (id === undefined) detail.push({ loc: ["path", "conversation_id"], msg: "must be a UUID", type: "uuid_parsing" });
        const filters = filtersOf(query, detail);
        const limitText = query.get("limit");
        const limit = limitText === null ? 100 : /^\d+$/.test(limitText) ? Number(limitText) : NaN;
        if (!(limit >= 1 && limit <= 100)) detail.push({ loc: ["query", "limit"], msg: "must be an integer from 1 to 100", type: "less_than_equal" });
        const sortOrder = query.get("sort_order") ?? "TIMESTAMP";
        if (sortOrder !== "TIMESTAMP" && sortOrder !== "TIMESTAMP_DESC") detail.push({ loc: ["query", "sort_order"], msg: "must be one of: TIMESTAMP, TIMESTAMP_DESC", type: "enum" });
        const pageId = query.get("page_id");
        if (pageId !== null && pageId.length > 512) detail.push({ loc: ["query", "page_id"], msg: "must be at most 512 characters", type: "string_too_long" });
        if (detail.length) return invalid(detail);
        const conversation = await requireConversation(store, id!);
        const order = sortOrder === "TIMESTAMP_DESC" ? "desc" : "asc";
        let after: Position | undefined;
        if (pageId !== null) {
          // A next_page_id, or the id of an event (the agent server's meaning: that event comes first).
          const decoded = cursors.decode(conversation.id, order, pageId);
          if ("position" in decoded) after = decoded.position;
          else {
            const position = await store.positionOf(conversation.id, pageId);
            if (!position) {
              const reason = decoded.reason.startsWith("is not") ? "is neither a next_page_id of this server nor the id of an event of this conversation" : decoded.reason;
              return invalid([{ loc: ["query", "page_id"], msg: `page_id ${reason}`, type: "value_error" }]);
            }
            after = { ts: position.ts, seq: order === "asc" ? position.seq - 1 : position.seq + 1 };
          }
        }
        const page = await store.searchJson(conversation.id, { ...filters, order, limit, after });
        const next = page.hasMore && page.last ? cursors.encode(conversation.id, order, page.last) : null;
        // The stored JSON texts as they are, as the server sends them.
        const body = `{"items":[${new TextDecoder().decode(page.json)}],"next_page_id":${JSON.stringify(next)}}`;
        return new HttpResponse(body, { status: 200, headers: { "Content-Type": "application/json; charset=utf-8" } });
      }),
    ),

    http.get(at("/api/conversations/:conversation_id/events/count"), ({ request, params }) =>
      answering(async () => {
        if (!world.publicRead && !authorized(request)) return unauthorized();
        const detail: Detail = [];
        const raw = params.conversation_id;
        const id = typeof raw === "string" ? canonicalConversationId(raw) : undefined;
        if (id === undefined) detail.push({ loc: ["path", "conversation_id"], msg: "must be a UUID", type: "uuid_parsing" });
        const filters = filtersOf(new URL(request.url).searchParams, detail);
        if (detail.length) return invalid(detail);
        const conversation = await requireConversation(store, id!);
        return HttpResponse.json(await store.count(conversation.id, filters));
      }),
    ),

    http.get(at("/api/conversations/:conversation_id"), ({ request, params }) =>
      answering(async () => {
        if (!authorized(request)) return unauthorized();
        const record = await requireConversation(store, pathId(params.conversation_id));
        return HttpResponse.json(await conversations.info(record));
      }),
    ),

    http.post(at("/api/conversations"), ({ request }) =>
      answering(async () => {
        if (!authorized(request)) return unauthorized();
        const body = (await jsonBody(request)) ?? {};
        if (typeof body !== "object" || body === null || Array.isArray(body)) return invalid([{ loc: ["body"], msg: "must be an object", type: "model_attributes_type" }]);
        const create = body as ConversationCreateRequest & Record<string, unknown>;
        const detail: Detail = [];
        for (const name of ["initial_user_msg", "repository", "selected_branch", "conversation_instructions", "replay_json"] as const) {
          if (create[name] != null && typeof create[name] !== "string") detail.push({ loc: ["body", name], msg: "must be a string", type: "string_type" });
        }
        if (create.conversation_id != null && (typeof create.conversation_id !== "string" || canonicalConversationId(create.conversation_id) === undefined)) {
          detail.push({ loc: ["body", "conversation_id"], msg: "must be a UUID", type: "uuid_parsing" });
        }
        if (detail.length) return invalid(detail);
        const record = await conversations.create(create);
        const response: ConversationCreateResponse = { status: "ok", conversation_id: record.id, message: null, conversation_status: record.status === "ERROR" ? "STOPPED" : record.status };
        return HttpResponse.json(response);
      }),
    ),

    http.post(at("/api/conversations/:conversation_id/events"), ({ request, params }) =>
      answering(async () => {
        if (!authorized(request)) return unauthorized();
        const id = (await requireConversation(store, pathId(params.conversation_id))).id;
        const body = await jsonBody(request);
        const run = typeof body === "object" && body !== null && (body as { run?: unknown }).run === true;
        checkUserMessage(body, ["body"]);
        return HttpResponse.json(await conversations.deliverMessage(id, body, { run }));
      }),
    ),

    http.get(at("/api/settings"), ({ request }) =>
      answering(async () => {
        if (!authorized(request)) return unauthorized();
        const text = await store.getDocument(SETTINGS_DOCUMENT);
        if (text === undefined) return failure(404, "Settings not found");
        return HttpResponse.json(settingsView(JSON.parse(text) as BrowserSettings));
      }),
    ),

    http.post(at("/api/settings"), ({ request }) =>
      answering(async () => {
        if (!authorized(request)) return unauthorized();
        const body = await jsonBody(request);
        // Read, merge and write with nothing in between (two requests at once must not lose a change).
        const change = async () => {
          const text = await store.getDocument(SETTINGS_DOCUMENT);
          const next = nextSettings(text === undefined ? undefined : (JSON.parse(text) as BrowserSettings), body);
          await store.putDocument(SETTINGS_DOCUMENT, JSON.stringify(next));
        };
        const write = settingsWrites.then(change, change);
        settingsWrites = write.catch(() => {});
        await write;
        return HttpResponse.json({ message: "Settings stored" });
      }),
    ),

    // The scenarios and how the mock runs, as the Node mock's GET /__mock.
    http.get(at("/__mock"), () => HttpResponse.json(describeWorld(world))),
  ];
}
