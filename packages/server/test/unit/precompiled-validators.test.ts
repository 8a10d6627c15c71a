/**
 * The request validators the build compiles (scripts/request-validators.ts → dist/request-validators.cjs,
 * AJV standalone code, built before the tests run): they are the bundled document's, and they
 * answer every input of a corpus exactly as the validators compiled at run time do (the same 422
 * entries, the same coerced values).
 */
import { describe, expect, it } from "vitest";
import { openapiDocument } from "@acs-toolkit/schema/documents";
import { exampleEvents } from "@acs-toolkit/schema/examples";
import { RequestValidationError, RequestValidators, type Json } from "../../src/validation/request-validators.js";
import { loadPrecompiledValidators } from "../../src/validation/precompiled-validators.js";

const document = openapiDocument as Json;
const file = new URL("../../dist/request-validators.cjs", import.meta.url);

type Op = { operationId?: string; parameters?: Array<{ name: string; in: string; $ref?: string }>; requestBody?: { content?: Record<string, { schema?: unknown; example?: unknown; examples?: Record<string, { value?: unknown }> }> } };
const operations = Object.values(document.paths as Record<string, Record<string, Op>>).flatMap((item) => Object.values(item)).filter((op) => op.operationId);

/** What a validator call gives: its values, or its 422 entries. */
function outcome(run: () => unknown): unknown {
  try {
    return { ok: run() };
  } catch (error) {
    if (error instanceof RequestValidationError) return { detail: error.detail };
    throw error;
  }
}

/** Bodies: shapes of every kind, the document's examples and edits of them, the spec's example events. */
function bodies(op: Op): unknown[] {
  const examples = Object.values(op.requestBody?.content ?? {}).flatMap((c) => [c.example, ...Object.values(c.examples ?? {}).map((e) => e.value)]).filter((e) => e !== undefined);
  const edits = examples.flatMap((example) =>
    typeof example === "object" && example !== null && !Array.isArray(example)
      ? Object.keys(example).flatMap((key) => [null, 12345, "text", [], { nested: true }].map((value) => ({ ...example, [key]: value })).concat([Object.fromEntries(Object.entries(example).filter(([k]) => k !== key))]))
      : [],
  );
  return [undefined, {}, [], null, "text", 42, true, { unknown: 1 }, ...examples, ...edits, ...exampleEvents(), ...exampleEvents().map((event) => ({ ...event, kind: "NoSuchKind" }))];
}

const QUERY_VALUES = ["", "abc", "-1", "0", "1", "100", "101", "true", "2026-02-05T11:24:45", "TIMESTAMP", "TIMESTAMP_DESC", "MessageEvent", "agent", "ea1319ad-3644-4544-8814-62eab0fb82b6", "x".repeat(1001)];

describe("precompiled request validators", () => {
  const precompiled = loadPrecompiledValidators(document, file);
  const runtime = new RequestValidators(document);

  it("are built for the bundled document, one for every path, query and body schema", () => {
    expect(precompiled).toBeDefined();
    expect([...precompiled!.keys()].sort()).toEqual(runtime.requestSchemas.map((s) => s.schema.$id).sort());
    expect(loadPrecompiledValidators({ ...document, info: { title: "another document" } }, file)).toBeUndefined();
    expect(loadPrecompiledValidators(document, new URL("./no-such-file.cjs", file))).toBeUndefined();
  });

  it("answer a corpus of parameters and bodies as validators compiled at run time do", () => {
    const loaded = new RequestValidators(document, precompiled);
    let compared = 0;
    for (const op of operations) {
      const id = op.operationId!;
      const names = (op.parameters ?? []).map((p) => (p.$ref ? p.$ref.split("/").at(-1)! : p.name));
      const paths: Array<Record<string, string>> = [{}, { conversation_id: "not-a-uuid" }, { conversation_id: "ea1319ad-3644-4544-8814-62eab0fb82b6" }, { path: "a/b.txt", conversation_id: "EA1319AD-3644-4544-8814-62EAB0FB82B6" }];
      const queries = [{}, ...names.flatMap((name) => QUERY_VALUES.map((value) => ({ [name]: value }))), Object.fromEntries(names.map((name) => [name, "1"]))];
      for (const path of paths) {
        for (const query of queries) {
          expect(outcome(() => loaded.parameters(id, path, query)), `${id} ${JSON.stringify(path)} ${JSON.stringify(query)}`).toEqual(outcome(() => runtime.parameters(id, path, query)));
          compared++;
        }
      }
      for (const body of bodies(op)) {
        expect(outcome(() => loaded.body(id, structuredClone(body))), `${id} ${JSON.stringify(body)?.slice(0, 200)}`).toEqual(outcome(() => runtime.body(id, structuredClone(body))));
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(2000);
  });
});

describe("an unknown kind in a request body's union", () => {
  const precompiled = loadPrecompiledValidators(document, file);
  it.each([
    ["compiled here", new RequestValidators(document)],
    ["precompiled", new RequestValidators(document, precompiled)],
  ])("names the kinds it may be (%s), or the one it was probably meant to be", (_name, validators) => {
    expect(outcome(() => validators.body("setConfirmationPolicy", { policy: { kind: "Nope" } }))).toEqual({
      detail: [{ loc: ["body", "policy", "kind"], msg: 'unknown ConfirmationPolicy kind "Nope"; expected one of NeverConfirm, AlwaysConfirm, ConfirmRisky', type: "union_tag_invalid" }],
    });
    expect(outcome(() => validators.body("setConfirmationPolicy", { policy: { kind: "NeverConfirn" } }))).toMatchObject({ detail: [{ msg: 'unknown ConfirmationPolicy kind "NeverConfirn"; did you mean "NeverConfirm"?' }] });
  });
});
