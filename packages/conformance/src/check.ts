/**
 * A check: a small async function with an id, a title, the part of the spec it verifies and the
 * capabilities it needs. It passes by returning, fails by throwing a CheckFailure with the
 * evidence, and is skipped by throwing SkipCheck with the reason. The assertions below throw those.
 */
import type { CheckContext } from "./context.js";
import { describeReply, type Reply } from "./http.js";

/**
 * A capability a check needs beyond the five interface operations. The runner finds out once per
 * run whether the implementation has it, and skips the checks that need a missing one.
 * - `key`: the suite was given an API key (authentication checks need the right one to tell it from a wrong one);
 * - `websocket`: the live-events channel `/sockets/events/{conversation_id}`;
 * - `append`: `POST /api/conversations/{conversation_id}/events` (a user message over HTTP);
 * - `extension:<operationId>`: an operation of the spec marked `x-acs-extension`;
 * - `extension:startConversationRequest`: the agent server's StartConversationRequest body of createConversation.
 */
export type Need = "key" | "websocket" | "append" | `extension:${string}`;

export interface Check {
  /** Stable, dotted: `group.name`. `--only` and `--skip` match it (or a group prefix). */
  id: string;
  /** What must hold, in one line. */
  title: string;
  /** Where the spec says so: an operationId, a schema, an AsyncAPI channel. */
  spec: string;
  needs?: readonly Need[];
  run(ctx: CheckContext): Promise<void | string>;
}

/** Thrown by a check that found the implementation wrong; `evidence` says what was seen. */
export class CheckFailure extends Error {
  constructor(readonly evidence: string) {
    super(evidence);
  }
}

/** Thrown by a check that cannot run against this implementation; `reason` says why. */
export class SkipCheck extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

export function fail(evidence: string): never {
  throw new CheckFailure(evidence);
}

export function ensure(condition: unknown, evidence: string | (() => string)): asserts condition {
  if (!condition) fail(typeof evidence === "function" ? evidence() : evidence);
}

/** The reply has this status. */
export function expectStatus(reply: Reply, status: number): void {
  ensure(reply.status === status, () => `expected ${status}: ${describeReply(reply)}`);
}

/** The reply has this status and its JSON body is what the spec documents for it. */
export function expectConforms(ctx: CheckContext, operationId: string, reply: Reply, status: number): void {
  expectStatus(reply, status);
  const issues = ctx.spec.responseIssues(operationId, status, reply.json);
  ensure(issues.length === 0, () => `the ${status} body of ${operationId} does not match the spec (${issues.slice(0, 5).join("; ")}): ${describeReply(reply)}`);
}

/** A `loc` the culprit must be reported at: exactly this path, or (prefix) any path that starts with it. */
export interface ExpectedLoc {
  loc: ReadonlyArray<string | number>;
  prefix?: boolean;
}

const sameLoc = (actual: unknown, expected: ExpectedLoc): boolean =>
  Array.isArray(actual) &&
  (expected.prefix ? actual.length >= expected.loc.length : actual.length === expected.loc.length) &&
  expected.loc.every((token, i) => actual[i] === token);

/** The `detail` entries hold one at the expected `loc`. */
function expectLoc(detail: ReadonlyArray<{ loc: unknown }>, expected: ExpectedLoc): void {
  ensure(
    detail.some((d) => sameLoc(d.loc, expected)),
    () => `no detail entry at loc ${JSON.stringify(expected.loc)}${expected.prefix ? " (or below)" : ""}; got ${JSON.stringify(detail.map((d) => d.loc))}`,
  );
}

/** 422, an HTTPValidationError body, and one entry of `detail` at the expected `loc`. */
export function expect422(ctx: CheckContext, operationId: string, reply: Reply, expected: ExpectedLoc): void {
  expectConforms(ctx, operationId, reply, 422);
  const detail = (reply.json as { detail?: Array<{ loc: unknown }> }).detail ?? [];
  expectLoc(detail, expected);
}

/** The two id lists are equal; the evidence names the first difference. */
export function expectSameIds(actual: readonly string[], expected: readonly string[], what: string): void {
  if (actual.length === expected.length && actual.every((id, i) => id === expected[i])) return;
  const seen = new Set<string>();
  const duplicate = actual.find((id) => (seen.has(id) ? true : (seen.add(id), false)));
  const missing = expected.filter((id) => !actual.includes(id));
  const extra = actual.filter((id) => !expected.includes(id));
  const at = actual.findIndex((id, i) => id !== expected[i]);
  const facts = [
    actual.length !== expected.length && `${actual.length} events instead of ${expected.length}`,
    duplicate && `duplicate ${duplicate}`,
    missing.length && `missing ${missing.slice(0, 3).join(", ")}${missing.length > 3 ? ` and ${missing.length - 3} more` : ""}`,
    extra.length && `unexpected ${extra.slice(0, 3).join(", ")}${extra.length > 3 ? ` and ${extra.length - 3} more` : ""}`,
    !missing.length && !extra.length && !duplicate && at >= 0 && `order differs at position ${at}: ${actual[at]} where ${expected[at]} belongs`,
  ].filter(Boolean);
  fail(`${what}: ${facts.join("; ")}`);
}
