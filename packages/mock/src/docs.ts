/**
 * The OpenAPI document the mock serves at /openapi.json and renders at /docs: the bundled spec, told
 * apart as the mock's, with what a frontend developer needs on the page itself: the scenarios and
 * their conversation ids, the `Prefer` header on every operation (try it from the page), `/__mock`.
 * Requests are still checked against the bundled spec itself.
 */
import type { Scenario } from "./scenarios/types.js";

type Json = Record<string, unknown>;

const PREFER_PARAMETER = {
  name: "Prefer",
  in: "header",
  required: false,
  description:
    "acs-mock only (RFC 7240, as in Prism): `code=404` answers the operation's documented example for that status, `code=500` (any status the operation does not document) a failure in the interface's error shape, `example=NAME` a named example, `dynamic=true` data generated from the schema, `latency=800ms` a late answer. Validation comes first: an invalid request is a 422 whatever it prefers.",
  schema: { type: "string" },
  examples: {
    none: { summary: "the world answers", value: "" },
    failure: { summary: "an injected failure", value: "code=500" },
    notFound: { summary: "the documented 404", value: "code=404" },
    dynamic: { summary: "generated data", value: "dynamic=true" },
    slow: { summary: "a late answer", value: "latency=800ms" },
  },
};

const MOCK_PATH = {
  get: {
    operationId: "describeMock",
    tags: ["mock"],
    summary: "The mock's scenarios and settings (acs-mock only)",
    description: "What the mock serves: each scenario's name, conversation id, event count and whether it streams yet; seed, speed and whether reading needs the key. Never the keys.",
    security: [],
    responses: { "200": { description: "The scenarios and settings.", content: { "application/json": { schema: { type: "object", additionalProperties: true } } } } },
  },
};

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\s*\n\s*/g, " ");

interface MockDocumentFacts {
  scenarios: readonly Scenario[];
  publicRead: boolean;
}

/** The bundled OpenAPI document as the mock presents it (a copy; `base` is not changed). */
export function mockApiDocument(base: Json, facts: MockDocumentFacts): Json {
  const document = structuredClone(base);
  const info = (document.info ?? {}) as Json;
  const rows = facts.scenarios.map((s) => `| \`${cell(s.name)}\` | \`${s.conversationId}\` | ${s.events.length} | ${cell(s.description)} |`);
  info.title = `${String(info.title ?? "API")} — mock (acs-mock)`;
  info.description = [
    String(info.description ?? ""),
    "## acs-mock",
    "This is the mock for frontend work: every request is checked against the spec (a mistake is the interface's 422 with its `loc`), and the reference server's own code answers from memory. Everything is gone when the mock stops.",
    `**Key.** Writes need \`X-Session-API-Key\` (\`mock-session-key\` unless the mock was started with \`--key\`); event search, count and the live channel ${facts.publicRead ? "need no key (as the interface declares)" : "need it too (`--private-read`)"}.`,
    "**Scenarios.** Each is a conversation: its history is stored, the rest streams over the live channel (`/sockets/events/{conversation_id}`, see Live events above) once a client subscribes.",
    ["| scenario | conversation_id | events | what it shows |", "| --- | --- | --- | --- |", ...rows].join("\n"),
    "**Failures on request.** Every operation takes a `Prefer` header: `code=500`, `code=404`, `example=NAME`, `dynamic=true`, `latency=800ms` (see the parameter of each operation below).",
    "**`GET /__mock`** lists the scenarios and settings as JSON, for a test setup to find the conversation ids.",
  ].join("\n\n");
  document.info = info;
  document.tags = [...((document.tags as unknown[]) ?? []), { name: "mock", description: "acs-mock only" }];

  const paths = (document.paths ?? {}) as Record<string, Json>;
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      if (typeof operation !== "object" || operation === null) continue;
      const op = operation as Json;
      op.parameters = [...((op.parameters as unknown[]) ?? []), PREFER_PARAMETER];
    }
  }
  paths["/__mock"] = MOCK_PATH;
  document.paths = paths;
  return document;
}
