/**
 * The concerns the server shares with the browser mock through the core: page cursors
 * (one codec, the signature injected), the checks of the search and count queries (one function,
 * giving the details the spec-derived validator gives) and the settings' merge and view (one pair of
 * pure functions, the sealing injected). The mock's test/shared-core.test.ts checks that the
 * browser mock answers with them as the server does.
 */
import { describe, expect, it } from "vitest";
import { openapiDocument } from "@acs-toolkit/schema/documents";
import { checkEventQuery, cursorCodec, NOT_A_CURSOR, PLAIN_SECRETS, SEARCH_PARAMETERS, settingsView, storeSettings, UNSIGNED_CURSORS } from "../../src/core/index.js";
import { createCursorCodec } from "../../src/signed-cursors.js";
import { RequestValidationError, RequestValidators } from "../../src/validation/request-validators.js";
import { createCipher } from "../../src/secrets.js";
import * as server from "../../src/sealed-settings.js";

const ID = "974caa29-4f4b-4c30-b4e1-5169f41e6d3d";

describe("page cursors", () => {
  const signed = createCursorCodec(Buffer.alloc(32, 7));
  const unsigned = cursorCodec(UNSIGNED_CURSORS);
  // Issued by the server before the codec moved to the core: they must still decode, byte for byte.
  const ISSUED: Array<[cursor: string, order: "asc" | "desc", ts: number, seq: number]> = [
    ["WzEsIjk3NGNhYTI5LTRmNGItNGMzMC1iNGUxLTUxNjlmNDFlNmQzZCIsImRlc2MiLDE3NzAyOTA2ODcxNDI4MTksNDJd.JKr26R7a_DsugkI0x3cgvA", "desc", 1770290687142819, 42],
    ["WzEsIjk3NGNhYTI5LTRmNGItNGMzMC1iNGUxLTUxNjlmNDFlNmQzZCIsImFzYyIsLTUsMF0.DboKAY1eV3uPoLHgQM2fDA", "asc", -5, 0],
  ];

  it.each(ISSUED)("keep the server's wire format (%s)", (cursor, order, ts, seq) => {
    expect(signed.encode({ conversationId: ID, order }, { ts, seq })).toBe(cursor);
    expect(signed.decode({ conversationId: ID, order }, cursor)).toEqual({ ok: true, position: { ts, seq } });
  });

  it("unsigned (the browser mock's): the same payload, no signature, the same reasons", () => {
    const scope = { conversationId: ID, order: "desc" as const };
    const cursor = unsigned.encode(scope, { ts: 1770290687142819, seq: 42 });
    expect(cursor).toBe(ISSUED[0]![0].split(".")[0]);
    expect(unsigned.decode(scope, cursor)).toEqual({ ok: true, position: { ts: 1770290687142819, seq: 42 } });
    for (const codec of [signed, unsigned]) {
      const issued = codec.encode(scope, { ts: 1, seq: 1 });
      expect(codec.decode({ ...scope, order: "asc" }, issued)).toEqual({ ok: false, reason: "was issued for sort_order TIMESTAMP_DESC" });
      expect(codec.decode({ ...scope, conversationId: "c2" }, issued)).toEqual({ ok: false, reason: "belongs to another conversation" });
      expect(codec.decode(scope, "x" + issued)).toEqual({ ok: false, reason: NOT_A_CURSOR });
      expect(codec.decode(scope, `${issued}.x`)).toEqual({ ok: false, reason: NOT_A_CURSOR });
    }
    // Neither takes the other's: the server's needs its signature, the unsigned one has none.
    expect(signed.decode(scope, cursor)).toEqual({ ok: false, reason: NOT_A_CURSOR });
    expect(unsigned.decode(scope, signed.encode(scope, { ts: 1, seq: 1 }))).toEqual({ ok: false, reason: NOT_A_CURSOR });
  });
});

describe("the search and count query checks", () => {
  const validators = new RequestValidators(openapiDocument as Record<string, unknown>);
  const KEYWORDS = ["type", "format", "enum", "minimum", "maximum", "maxLength", "pattern", "x-format-name"];

  it.each(Object.keys(SEARCH_PARAMETERS) as Array<keyof typeof SEARCH_PARAMETERS>)("check %s's parameters as the spec declares them", (operationId) => {
    const document = openapiDocument as { paths: Record<string, Record<string, { operationId?: string; parameters?: unknown[] }>>; components: Record<string, Record<string, unknown>> };
    const resolve = (node: unknown): Record<string, unknown> => {
      const ref = (node as { $ref?: string }).$ref;
      if (ref === undefined) return node as Record<string, unknown>;
      return resolve(ref.slice(2).split("/").reduce<unknown>((at, key) => (at as Record<string, unknown>)[key], document));
    };
    const operation = Object.values(document.paths).flatMap((item) => Object.values(item)).find((op) => op.operationId === operationId)!;
    const declared: Record<string, Record<string, Record<string, unknown>>> = { path: {}, query: {} };
    for (const parameter of (operation.parameters ?? []).map(resolve) as Array<{ name: string; in: "path" | "query"; schema: unknown }>) {
      const schema = resolve(parameter.schema);
      declared[parameter.in]![parameter.name] = Object.fromEntries(KEYWORDS.filter((k) => schema[k] !== undefined).map((k) => [k, schema[k]]));
    }
    expect(JSON.parse(JSON.stringify(SEARCH_PARAMETERS[operationId]))).toEqual(declared);
    expect(Object.keys(SEARCH_PARAMETERS[operationId].query)).toEqual(Object.keys(declared.query!)); // AJV reports in this order
  });

  /** What the server answered before the checks moved to the core: the spec-derived validator, then the instants. */
  const before = (operationId: string, path: { conversation_id: string }, query: Record<string, unknown>) => {
    try {
      return { parameters: validators.parameters(operationId, path, query) };
    } catch (error) {
      if (error instanceof RequestValidationError) return { detail: error.detail };
      throw error;
    }
  };

  const VALUES = ["", "0", "1", "7", "100", "101", " 5", "  ", "1e1", "0x10", "Infinity", "-0", "1.5", "-3", "abc", "x".repeat(70), "a-b", "MessageEvent",
    "openhands.sdk.event.llm_convertible.action.ActionEvent", "1abc", "hook", "agent", "robot", "TIMESTAMP", "TIMESTAMP_DESC", "NEWEST", "2026-02-05", "2026-02-05T11:24:47.142819+02:00",
    "20260205", "2026-02-30", "2026-02-05T24:00", "1770290687.5", "p".repeat(513), "é".repeat(257), "😀".repeat(300), "k".repeat(257), "-".repeat(300), "q".repeat(1001)];
  const NAMES = ["page_id", "limit", "kind", "source", "body", "sort_order", "timestamp__gte", "timestamp__lt", "unknown"];
  const IDS = [ID, ID.toUpperCase(), "nope", ID.replace(/-/g, ""), `{${ID}}`];

  /** A seeded table of queries: each name with a value from the list (sometimes given twice) or absent. */
  function table(count: number): Array<[{ conversation_id: string }, Record<string, unknown>]> {
    let seed = 15;
    const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const rows: Array<[{ conversation_id: string }, Record<string, unknown>]> = [];
    for (let i = 0; i < count; i++) {
      const query: Record<string, unknown> = {};
      for (const name of NAMES) {
        const roll = next(10);
        if (roll < 6) continue;
        query[name] = roll === 9 ? [VALUES[next(VALUES.length)], VALUES[next(VALUES.length)]] : VALUES[next(VALUES.length)];
      }
      rows.push([{ conversation_id: IDS[next(IDS.length)]! }, query]);
    }
    return rows;
  }

  it.each(["searchEvents", "countEvents"] as const)("%s: the same 422 details as the spec-derived validator, and the same values", (operationId) => {
    const rows = [...VALUES.flatMap((value) => NAMES.map((name) => [{ conversation_id: ID }, { [name]: value }] as [{ conversation_id: string }, Record<string, unknown>])), ...table(1500)];
    let refused = 0;
    for (const [path, query] of rows) {
      const old = before(operationId, path, query);
      const checked = checkEventQuery(operationId, path, query);
      const what = `${JSON.stringify(path)} ${JSON.stringify(query)}`;
      if (old.detail) {
        refused++;
        expect(checked, what).toEqual({ ok: false, detail: old.detail, afterNotFound: false });
        continue;
      }
      const q = old.parameters!.query as Record<string, string | number | undefined>;
      const badInstant = (["timestamp__gte", "timestamp__lt"] as const).find((name) => q[name] !== undefined && !checked.ok && checked.detail[0]!.loc[1] === name);
      if (badInstant) {
        expect(checked, what).toMatchObject({ ok: false, afterNotFound: true, detail: [{ loc: ["query", badInstant], type: "datetime_parsing" }] });
        continue;
      }
      expect(checked.ok, what).toBe(true);
      if (!checked.ok) continue;
      if (operationId === "searchEvents") {
        expect(checked.query.limit, what).toBe(q.limit ?? 100);
        expect(checked.query.pageId, what).toBe(q.page_id);
        expect(checked.query.order, what).toBe(q.sort_order === "TIMESTAMP_DESC" ? "desc" : "asc");
      }
      expect(checked.query.conversationId, what).toBe(old.parameters!.path.conversation_id);
    }
    expect(refused).toBeGreaterThan(rows.length / 2);
  });

  it("answers the first parameters past the server's bound first", () => {
    const leading = [{ loc: ["query", "p1000"], msg: "was not read", type: "value_error" }];
    expect(checkEventQuery("countEvents", { conversation_id: ID }, { kind: "a-b" }, leading)).toMatchObject({ ok: false, detail: [leading[0], { loc: ["query", "kind"] }] });
    expect(checkEventQuery("countEvents", { conversation_id: ID }, { timestamp__lt: "2026-02-30" }, leading)).toEqual({ ok: false, detail: leading, afterNotFound: false });
  });
});

describe("the settings' merge and view", () => {
  const cipher = createCipher(Buffer.alloc(32, 3));
  const requests: unknown[] = [
    { llm_model: "anthropic/claude", llm_api_key: "sk-1", max_iterations: 50, secrets_store: { provider_tokens: { github: { token: "ghp_x", host: "github.com" } }, custom_secrets: { A: "a", B: { secret: "b", description: "bee" } } } },
    { language: "fr", search_api_key: "", mcp_config: { sse_servers: [{ url: "https://sse", api_key: "k" }], stdio_servers: [{ name: "n", command: "c", env: { T: "t" } }] } },
    { llm_api_key: null, secrets_store: { provider_tokens: { github: { host: "example.com" }, gitlab: { token: "glpat" } }, custom_secrets: { A: "" } }, mcp_config: { sse_servers: [{ url: "https://sse" }], stdio_servers: [{ name: "n", command: "c", env: { T: null } }] } },
  ];

  it("are the server's: the same view whether secrets are sealed (server) or plain (browser mock)", () => {
    let sealed: server.StoredSettings | undefined;
    let plain: server.StoredSettings | undefined;
    for (const request of requests) {
      sealed = server.storeSettings(sealed, request as never, cipher);
      plain = storeSettings(plain, request as never, PLAIN_SECRETS);
      expect(settingsView(plain)).toEqual(server.settingsView(sealed));
    }
    // Plain is what the sealed document opens to.
    const opened = server.decryptedSecrets(sealed, cipher);
    expect(plain!.llm_api_key).toBe(opened.llm_api_key);
    expect(plain!.provider_tokens).toEqual(opened.provider_tokens);
    expect(plain!.custom_secrets).toEqual(opened.custom_secrets);
    expect(plain!.mcp_config).toEqual(opened.mcp_config);
  });
});
