/**
 * Prism's request violations → the interface's 422 `HTTPValidationError` entries, with the `loc` the
 * reference server gives for the same mistake (`["query","limit"]`, `["body","suggested_task","repo"]`).
 *
 * Prism's diagnostics are AJV errors rendered as sentences; some say less than the server does: a
 * `propertyNames` failure does not name the key, and a value that matches no branch of a `oneOf`
 * lists every branch's complaint. Those are **coarse**: the mock then lets the server's own
 * validation (behind Prism) answer, so the status and `loc` are always the server's.
 */
import type { ValidationError } from "@acs-toolkit/schema";
import { ERROR_TYPES as SERVER_ERROR_TYPES } from "@acs-toolkit/server";

/**
 * FastAPI/pydantic-style error types by JSON Schema keyword: the server's table (by validator rule),
 * plus the keywords Prism names that the server's rules call otherwise.
 */
const ERROR_TYPES: Record<string, string> = {
  ...SERVER_ERROR_TYPES,
  additionalProperties: SERVER_ERROR_TYPES.unknownProperty!,
  unevaluatedProperties: SERVER_ERROR_TYPES.unknownProperty!,
  uniqueItems: "value_error",
  multipleOf: "value_error",
};

/** Keywords whose diagnostic says where the culprit is and what is wrong with it. */
const PRECISE = new Set(Object.keys(ERROR_TYPES));
const UNIONS = new Set(["anyOf", "oneOf"]);

/**
 * What {@link mapViolations} reads of a Prism diagnostic (Prism's `IPrismDiagnostic` has these and
 * more): stated here so that this package's types do not expose Prism's, whose declarations need
 * packages it does not depend on.
 */
export interface PrismViolation {
  code?: string | number;
  message: string;
  path?: readonly string[];
}

export type MappedViolations = { precise: true; detail: ValidationError[] } | { precise: false; reason: string };

interface Located {
  loc: Array<string | number>;
  code: string;
  message: string;
}

/** Prism's "Request body property a.b must be …" → "must be …". */
function sentence(message: string): string {
  return message
    .replace(/^Request (?:body|query parameter|path parameter|header parameter|header|cookie parameter)(?: property)? ?(?:\S+ )?(?=must |should |property name )/, "")
    .replace(/^Request (?:body|query parameter|path parameter|header) /, "");
}

/**
 * Path tokens as the server writes them: array indexes as numbers (read off the request's body; in
 * the query, where a parameter is flat, any token after its name is an index: `ids=a&ids=b`).
 */
function locOf(path: readonly string[], body: unknown): Array<string | number> {
  const [where, ...rest] = path;
  const loc: Array<string | number> = [where!];
  let at: unknown = where === "body" ? body : undefined;
  for (const token of rest) {
    if ((Array.isArray(at) || (where === "query" && loc.length >= 2)) && /^\d+$/.test(token)) {
      loc.push(Number(token));
      at = Array.isArray(at) ? at[Number(token)] : undefined;
    } else {
      loc.push(token);
      at = typeof at === "object" && at !== null ? (at as Record<string, unknown>)[token] : undefined;
    }
  }
  return loc;
}

const startsWith = (loc: ReadonlyArray<string | number>, prefix: ReadonlyArray<string | number>) => prefix.length <= loc.length && prefix.every((t, i) => loc[i] === t);

/**
 * Maps Prism's input diagnostics of one request. `body` is the parsed JSON body Prism saw (to tell
 * array indexes from property names).
 */
export function mapViolations(diagnostics: readonly PrismViolation[], body: unknown): MappedViolations {
  const located: Located[] = [];
  const unions: Array<Array<string | number>> = [];
  for (const d of diagnostics) {
    const code = String(d.code ?? "");
    if (!d.path?.length) {
      if (code === "required" && /body/i.test(d.message)) {
        located.push({ loc: ["body"], code: "required", message: "a JSON body is required" });
        continue;
      }
      return { precise: false, reason: `a violation without a location: ${d.message}` };
    }
    const loc = locOf(d.path, body);
    if (UNIONS.has(code)) {
      unions.push(loc);
      continue;
    }
    if (!PRECISE.has(code)) return { precise: false, reason: `Prism's ${code} violation does not name the culprit` };
    if (code === "required") {
      const name = /required property '([^']+)'/.exec(d.message)?.[1];
      if (name === undefined) return { precise: false, reason: "a missing property Prism does not name" };
      loc.push(name);
    }
    if (code === "additionalProperties" || code === "unevaluatedProperties") {
      const name = /found '([^']+)'/.exec(d.message)?.[1] ?? /property '([^']+)'/.exec(d.message)?.[1];
      if (name === undefined) return { precise: false, reason: "an unknown property Prism does not name" };
      loc.push(name);
    }
    located.push({ loc, code, message: sentence(d.message) });
  }

  // `T | null` is `anyOf: [T, {type: null}]`: when T's branch says what is wrong, the null branch's
  // "must be null" is noise.
  const kept = located.filter(
    (v) => !(v.code === "type" && /must be null$/.test(v.message) && located.some((o) => o !== v && startsWith(o.loc, v.loc))),
  );
  // A value no branch of a union accepts: several branches complaining means Prism cannot say which
  // branch was meant (the server's discriminator can).
  for (const union of unions) {
    const under = kept.filter((v) => startsWith(v.loc, union));
    if (under.length > 1) return { precise: false, reason: `a value at ${union.join(".")} that matches no branch of a union` };
    if (under.length === 0) return { precise: false, reason: `a union at ${union.join(".")} without a reason` };
  }
  if (kept.length === 0) return { precise: false, reason: "no violation left to report" };

  const detail: ValidationError[] = [];
  const seen = new Set<string>();
  for (const v of kept) {
    const key = JSON.stringify(v.loc) + v.code;
    if (seen.has(key)) continue;
    seen.add(key);
    detail.push({ loc: v.loc, msg: v.message, type: ERROR_TYPES[v.code] ?? "value_error" });
  }
  return { precise: true, detail };
}
