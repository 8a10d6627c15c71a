/**
 * The HTTP side of the browser mock: MSW `http` handlers answering from the browser world as the
 * reference server answers (routes/events.ts, routes/conversations.ts, routes/settings.ts): the same shapes, paging
 * order, 401 and 404 details, and a 422 naming the culprit's `loc` for bad input. Conversations are
 * created, read and sent messages through the server's core (`ConversationCore`), as the server's
 * routes do, and so are the search and count queries (`checkEventQuery`: the server's 422 details),
 * page cursors (the server's codec, unsigned) and the settings' merge and view; the checks of the
 * other bodies served here are written out (the Node mock has Prism check everything against the
 * spec; Prism does not run in a browser).
 */
import { http, HttpResponse, type HttpHandler } from "msw";
import { PROVIDER_TYPES, SETTINGS_FIELDS, type ConversationCreateRequest, type ConversationCreateResponse, type Settings, type ValidationError } from "@acs-toolkit/schema";
import {
  canonicalConversationId,
  checkEventQuery,
  checkUserMessage,
  cursorCodec,
  HttpError,
  pageStart,
  PLAIN_SECRETS,
  RequestValidationError,
  settingsView,
  storeSettings,
  UNSIGNED_CURSORS,
  type EventQuery,
  type EventQueryOperation,
  type StoredSettings,
} from "@acs-toolkit/server/core";
import { ConversationNotFoundError, requireConversation } from "@acs-toolkit/server/store";
import { describeWorld } from "../describe-world.js";
import type { BrowserWorld } from "./world.js";

type Detail = ValidationError[];

/** The store document of the settings (the server's name). */
const SETTINGS_DOCUMENT = "settings";

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

/** Page cursors: the server's (core/cursor.ts), unsigned (a mock has no secret to keep). */
const cursors = cursorCodec(UNSIGNED_CURSORS);

/** A query's parameters as the server reads them: a parameter given more than once is an array. */
function queryOf(url: string): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of new URL(url).searchParams) {
    const had = query[name];
    query[name] = had === undefined ? value : [...(Array.isArray(had) ? had : [had]), value];
  }
  return query;
}

/**
 * The checked query of searchEvents or countEvents (core/event-query.ts: the server's checks and
 * 422 details), or its 422 thrown; one about values of the right shape comes after the 404.
 * @throws RequestValidationError, ConversationNotFoundError
 */
async function eventQuery(store: BrowserWorld["store"], operation: EventQueryOperation, raw: string | readonly string[] | undefined, url: string): Promise<EventQuery> {
  const checked = checkEventQuery(operation, { conversation_id: typeof raw === "string" ? raw : "" }, queryOf(url));
  if (checked.ok) return checked.query;
  if (checked.afterNotFound) await requireConversation(store, raw as string);
  throw new RequestValidationError(checked.detail);
}

/** The conversation id of a path, or a 422 at `["path", "conversation_id"]`. */
function pathId(raw: string | readonly string[] | undefined): string {
  const id = typeof raw === "string" ? canonicalConversationId(raw) : undefined;
  if (id === undefined) throw new RequestValidationError([{ loc: ["path", "conversation_id"], msg: "must be a UUID", type: "uuid_parsing" }]);
  return id;
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

const SCALAR_TYPES = { string: ["a string", "string_type"], number: ["a number", "float_type"], integer: ["an integer", "int_type"], boolean: ["a boolean", "bool_type"] } as const;

/**
 * The 422 details of a `POST /api/settings` body for the values the merge reads (the Node mock has
 * Prism check the body against the spec; Prism does not run in a browser): the scalar fields of the
 * generated table and `secrets_store.provider_tokens`.
 */
function settingsBodyDetails(body: Record<string, unknown>): Detail {
  const detail: Detail = [];
  for (const [name, field] of Object.entries(SETTINGS_FIELDS)) {
    const value = body[name];
    const [expected, type] = SCALAR_TYPES[field.type];
    const fits = value == null || (field.type === "string" ? typeof value === "string" : field.type === "boolean" ? typeof value === "boolean" : typeof value === "number" && Number.isFinite(value) && (field.type === "number" || Number.isInteger(value)));
    if (!fits) detail.push({ loc: ["body", name], msg: `must be ${expected} or null`, type });
  }
  const secretsStore = body.secrets_store;
  if (secretsStore == null) return detail;
  const tokens = isObject(secretsStore) ? secretsStore.provider_tokens : undefined;
  if (!isObject(secretsStore)) detail.push({ loc: ["body", "secrets_store"], msg: "must be an object or null", type: "model_type" });
  else if (tokens != null && !isObject(tokens)) detail.push({ loc: ["body", "secrets_store", "provider_tokens"], msg: "must be an object", type: "dict_type" });
  else if (tokens != null) {
    for (const [provider, entry] of Object.entries(tokens)) {
      const where = ["body", "secrets_store", "provider_tokens", provider];
      if (!(PROVIDER_TYPES as readonly string[]).includes(provider)) detail.push({ loc: where, msg: `must be one of ${PROVIDER_TYPES.join(", ")}`, type: "enum" });
      else if (!isObject(entry)) detail.push({ loc: where, msg: "must be an object", type: "model_type" });
      else {
        for (const name of ["token", "host", "user_id"]) {
          if (entry[name] != null && typeof entry[name] !== "string") detail.push({ loc: [...where, name], msg: "must be a string or null", type: "string_type" });
        }
      }
    }
  }
  return detail;
}

/**
 * The next stored settings after a `POST /api/settings` body: the server's merge (core/settings.ts:
 * storeSettings), secrets kept plain (a mock has nothing to protect; the view never returns them).
 * @throws RequestValidationError
 */
function nextSettings(previous: StoredSettings | undefined, body: unknown): StoredSettings {
  if (!isObject(body)) throw new RequestValidationError([{ loc: ["body"], msg: "must be an object", type: "model_attributes_type" }]);
  const detail = settingsBodyDetails(body);
  if (detail.length) throw new RequestValidationError(detail);
  try {
    return storeSettings(previous, body as Settings, PLAIN_SECRETS);
  } catch (error) {
    // The merge's own checks (mcp_config's shape, custom secrets), named by their path.
    if (error instanceof TypeError) throw new RequestValidationError([{ loc: ["body"], msg: error.message, type: "value_error" }]);
    throw error;
  }
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
        const q = await eventQuery(store, "searchEvents", params.conversation_id, request.url);
        const conversation = await requireConversation(store, q.conversationId.toLowerCase());
        const scope = { conversationId: conversation.id, order: q.order };
        const after = q.pageId === undefined ? undefined : await pageStart((id, event) => store.positionOf(id, event), cursors, scope, q.pageId);
        const page = await store.searchJson(conversation.id, { ...q.filters, order: q.order, limit: q.limit, after });
        const next = page.hasMore && page.last ? cursors.encode(scope, page.last) : null;
        // The stored JSON texts as they are, as the server sends them.
        const body = `{"items":[${new TextDecoder().decode(page.json)}],"next_page_id":${JSON.stringify(next)}}`;
        return new HttpResponse(body, { status: 200, headers: { "Content-Type": "application/json; charset=utf-8" } });
      }),
    ),

    http.get(at("/api/conversations/:conversation_id/events/count"), ({ request, params }) =>
      answering(async () => {
        if (!world.publicRead && !authorized(request)) return unauthorized();
        const q = await eventQuery(store, "countEvents", params.conversation_id, request.url);
        const conversation = await requireConversation(store, q.conversationId.toLowerCase());
        return HttpResponse.json(await store.count(conversation.id, q.filters));
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
        return HttpResponse.json(settingsView(JSON.parse(text) as StoredSettings));
      }),
    ),

    http.post(at("/api/settings"), ({ request }) =>
      answering(async () => {
        if (!authorized(request)) return unauthorized();
        const body = await jsonBody(request);
        // Read, merge and write with nothing in between (two requests at once must not lose a change).
        const change = async () => {
          const text = await store.getDocument(SETTINGS_DOCUMENT);
          const next = nextSettings(text === undefined ? undefined : (JSON.parse(text) as StoredSettings), body);
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
