/**
 * Turns AJV's error objects into issues a person can act on: the JSON pointer of the culprit, the
 * rule it broke and one sentence (`/action/tab_id: must be exactly 4 characters, got "abcde"`).
 *
 * Unions are discriminated by `kind` (or `type`), so AJV already reports only the selected
 * variant's errors; what is left to prune is the `X | null` noise of nullable references.
 */
import type { AjvErrorObject } from "./standalone.js";
import { joinPointer } from "./pointer.js";
import { profileLabel, profileRelease, type Profile } from "./profile.js";
import { inRelease, RELEASE_KEYWORD, TAG_RELEASES_KEYWORD, VALUE_RELEASE_KEYWORD, type ReleaseMark, type TagReleases, type ValueReleases } from "./release-keywords.js";

/**
 * The rule an issue breaks: a JSON Schema keyword (`required`, `type`, `enum`, `const`, `minimum`,
 * `maxLength`, `pattern`, …) or one of the validator's own codes.
 */
export type IssueRule =
  | "required"
  | "type"
  | "enum"
  | "const"
  | "minimum"
  | "maximum"
  | "exclusiveMinimum"
  | "exclusiveMaximum"
  | "minLength"
  | "maxLength"
  | "pattern"
  | "minItems"
  | "maxItems"
  /** A property the spec (or the profile) does not allow on that object (strict objects only). */
  | "unknownProperty"
  /** A `kind` (or content `type`) that names no variant of the union (or none of the profile). */
  | "unknownKind"
  /** A legacy field (SDK 1.9) that current readers accept and drop: always a warning. */
  | "legacyField"
  /** Input text that is not JSON (trajectories). */
  | "json"
  /** The value could not be validated at all (for example a getter threw). */
  | "internal"
  | (string & {});

export interface ValidationIssue {
  /** JSON pointer to the culprit inside the validated value; "" is the value itself. */
  pointer: string;
  rule: IssueRule;
  /** One sentence, without the pointer: `must be exactly 4 characters, got "abcde"`. */
  message: string;
}

/** `pointer: message`, the pointer shown as `/` for the root. */
export function formatIssue(issue: ValidationIssue): string {
  return `${issue.pointer || "/"}: ${issue.message}`;
}

const MAX_SHOWN = 60;

/** A short, safe rendering of a value for a message; never serializes deep or huge values. */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (typeof value === "string") {
    if (value.length <= MAX_SHOWN) return JSON.stringify(value);
    return `${JSON.stringify(value.slice(0, MAX_SHOWN))}… (${value.length} characters)`;
  }
  if (typeof value === "number" || typeof value === "boolean") return `${typeof value} ${String(value)}`;
  if (Array.isArray(value)) return `an array of ${value.length} item${value.length === 1 ? "" : "s"}`;
  if (typeof value === "object") return "an object";
  return typeof value;
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

const orList = (items: string[]) =>
  items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} or ${items[items.length - 1]}`;

const quoteList = (values: unknown[]) => orList(values.map((v) => JSON.stringify(v)));

const titleOf = (schema: Record<string, unknown> | undefined) =>
  typeof schema?.title === "string" ? schema.title : undefined;

/** Tag values a discriminated union accepts (`x-tags`, kept from the spec's discriminator mapping) in a release. */
function unionKinds(schema: Record<string, unknown> | undefined, release: number | undefined): string[] {
  const tags = Array.isArray(schema?.["x-tags"]) ? (schema["x-tags"] as string[]) : referencedKinds(schema);
  const releases = (schema?.[TAG_RELEASES_KEYWORD] ?? {}) as TagReleases;
  return tags.filter((tag) => {
    const [since, removed, core] = releases[tag] ?? [];
    return inRelease(release, since, removed, core);
  });
}

/**
 * The kinds of a union of the OpenAPI document (a request body's), which carries no `x-tags`: its
 * variants are references to schemas named after their kind (`#/components/schemas/NeverConfirm`).
 */
function referencedKinds(schema: Record<string, unknown> | undefined): string[] {
  const variants = Array.isArray(schema?.oneOf) ? (schema.oneOf as Array<{ $ref?: unknown }>) : [];
  return variants.flatMap((variant) => (typeof variant.$ref === "string" ? [variant.$ref.slice(variant.$ref.lastIndexOf("/") + 1)] : []));
}

/** Levenshtein distance, bounded to short strings (kind names). */
function distance(a: string, b: string): number {
  if (a.length > 64 || b.length > 64) return Infinity;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length]!;
}

function unknownKindMessage(tag: string, value: unknown, parent: Record<string, unknown> | undefined, release: number | undefined): string {
  const kinds = unionKinds(parent, release);
  const union = titleOf(parent) ?? "union";
  const got = describeValue(value);
  if (typeof value === "string") {
    const close = kinds
      .map((kind) => [kind, distance(value.toLowerCase(), kind.toLowerCase())] as const)
      .filter(([, d]) => d <= 3)
      .sort((x, y) => x[1] - y[1])[0];
    if (close) return `unknown ${union} ${tag} ${got}; did you mean "${close[0]}"?`;
  }
  return `unknown ${union} ${tag} ${got}; expected one of ${kinds.join(", ")}`;
}

/**
 * Why a profile's release lacks something marked [since, removed): `subject` came with a later
 * release, or an earlier one removed it. Release 0 is the interface profile.
 */
function releaseReason(release: number, marks: { since?: number; sinceText?: string; removedText?: string }, subject = "it", plural = false): string {
  if (release === 0) return `${subject} came with OpenHands ${marks.sinceText} and ${plural ? "are" : "is"} not in the interface 0.1.0 catalogue`;
  if (marks.since !== undefined && release < marks.since) return `${subject} came with OpenHands ${marks.sinceText}`;
  return `OpenHands ${marks.removedText} removed ${subject}`;
}

/** The issue of a release keyword: something the validation's profile does not have. */
function releaseIssue(error: AjvErrorObject, profile: Profile): { pointer: string; rule: IssueRule; message: string } {
  const release = profileRelease(profile) ?? 0;
  const label = profileLabel(profile);
  if (error.keyword === VALUE_RELEASE_KEYWORD) {
    const values = (error.schema ?? {}) as ValueReleases;
    const marks = typeof error.data === "string" ? values[error.data] : undefined;
    const allowed = ((error.parentSchema?.enum ?? []) as unknown[]).filter((value) => typeof value !== "string" || inRelease(release, values[value]?.since));
    return { pointer: error.instancePath, rule: "enum", message: `must be one of ${quoteList(allowed)} in ${label}, got ${describeValue(error.data)}: ${releaseReason(release, marks ?? {})}` };
  }
  const mark = (error.schema ?? {}) as ReleaseMark;
  if (mark.subject === "kind") {
    const kind = typeof error.data === "object" && error.data !== null ? (error.data as { kind?: unknown }).kind : undefined;
    // A pattern variant (ClientAction) is one kind per name: the reason speaks of all of them.
    const reason = kind === mark.name ? releaseReason(release, mark) : releaseReason(release, mark, `${mark.name} kinds`, true);
    return { pointer: joinPointer(error.instancePath, "kind"), rule: "unknownKind", message: `unknown ${mark.union ?? "union"} kind ${describeValue(kind)} in ${label}: ${reason}` };
  }
  return { pointer: error.instancePath, rule: "unknownProperty", message: `is not a property of ${mark.owner ?? "this object"} in ${label}: ${releaseReason(release, mark)}` };
}

function messageFor(error: AjvErrorObject, profile: Profile | undefined): { pointer: string; rule: IssueRule; message: string } {
  const { keyword, params, parentSchema, instancePath } = error;
  const data = error.data;
  if ((keyword === RELEASE_KEYWORD || keyword === VALUE_RELEASE_KEYWORD) && profile !== undefined && profile !== "releases") return releaseIssue(error, profile);
  switch (keyword) {
    case "required": {
      const property = String(params.missingProperty);
      const owner = titleOf(parentSchema);
      return { pointer: joinPointer(instancePath, property), rule: "required", message: `is required${owner ? ` in ${owner}` : ""}` };
    }
    case "additionalProperties": {
      const property = String(params.additionalProperty);
      const owner = titleOf(parentSchema) ?? "this object";
      const allowed = Object.keys((parentSchema?.properties as object | undefined) ?? {});
      return {
        pointer: joinPointer(instancePath, property),
        rule: "unknownProperty",
        message: `is not a property of ${owner}${allowed.length ? ` (allowed: ${allowed.join(", ")})` : ""}`,
      };
    }
    case "discriminator": {
      const tag = String(params.tag);
      const tagValue = params.tagValue;
      const pointer = joinPointer(instancePath, tag);
      if (params.error === "mapping") return { pointer, rule: "unknownKind", message: unknownKindMessage(tag, tagValue, parentSchema, profileRelease(profile)) };
      if (tagValue === undefined) {
        return { pointer, rule: "required", message: `is required: it names the ${titleOf(parentSchema) ?? "variant"}` };
      }
      return { pointer, rule: "type", message: `must be a string naming the ${titleOf(parentSchema) ?? "variant"}, got ${describeValue(tagValue)}` };
    }
    case "type": {
      const expected = Array.isArray(params.type) ? (params.type as string[]) : String(params.type).split(",");
      const got = data === null || data === undefined || typeof data === "object" ? describeValue(data) : `${typeName(data)} ${describeValue(data).replace(/^(number|boolean) /, "")}`;
      return { pointer: instancePath, rule: "type", message: `must be ${orList(expected)}, got ${got}` };
    }
    case "enum":
      return { pointer: instancePath, rule: "enum", message: `must be one of ${quoteList(params.allowedValues as unknown[])}, got ${describeValue(data)}` };
    case "const":
      return { pointer: instancePath, rule: "const", message: `must be ${JSON.stringify(params.allowedValue)}, got ${describeValue(data)}` };
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      return { pointer: instancePath, rule: keyword, message: `must be ${String(params.comparison)} ${String(params.limit)}, got ${String(data)}` };
    case "minLength":
    case "maxLength": {
      const min = parentSchema?.minLength;
      const max = parentSchema?.maxLength;
      const length = typeof data === "string" ? [...data.slice(0, 10_000)].length : undefined;
      const bound =
        min !== undefined && min === max
          ? `exactly ${String(min)} characters`
          : keyword === "minLength"
            ? `at least ${String(params.limit)} characters`
            : `at most ${String(params.limit)} characters`;
      const got = length !== undefined && length > MAX_SHOWN ? `a string of ${typeof data === "string" ? data.length : "?"} characters` : describeValue(data);
      return { pointer: instancePath, rule: keyword, message: `must be ${bound}, got ${got}` };
    }
    case "pattern": {
      const name = parentSchema?.["x-format-name"];
      const expected = typeof name === "string" ? name : `a string matching /${String(params.pattern)}/`;
      return { pointer: instancePath, rule: "pattern", message: `must be ${expected}, got ${describeValue(data)}` };
    }
    case "minItems":
    case "maxItems": {
      const count = Array.isArray(data) ? data.length : 0;
      const bound = parentSchema?.minItems !== undefined && parentSchema.minItems === parentSchema.maxItems ? "exactly" : keyword === "minItems" ? "at least" : "at most";
      return { pointer: instancePath, rule: keyword, message: `must have ${bound} ${String(params.limit)} items, got ${count}` };
    }
    case "false schema":
      return { pointer: instancePath, rule: "unknownProperty", message: "is not allowed here" };
    default:
      return { pointer: instancePath, rule: keyword, message: `does not satisfy the "${keyword}" rule` };
  }
}

/**
 * Rules not worth reporting at a pointer that also has an issue of one of the listed rules: once a
 * value has the wrong type or length, its bounds or pattern add nothing.
 */
const SHADOWED = new Map<string, string[]>([
  // An enum or const names the allowed values, which says more than the type they share.
  ["type", ["enum", "const"]],
  ["pattern", ["type", "maxLength", "minLength"]],
  ["minimum", ["type"]],
  ["maximum", ["type"]],
  ["minLength", ["type"]],
  ["maxLength", ["type"]],
  ["minItems", ["type"]],
  ["maxItems", ["type"]],
  // Items past the end of a tuple (`items: false`) are the tuple's maxItems again.
  ["items", ["maxItems"]],
]);

/**
 * Converts AJV error objects (from a validator compiled with `allErrors` and `verbose`) into
 * readable issues, without union noise. Exported for servers that validate requests with AJV.
 * `profile`: the profile the errors were found under, which messages of the release keywords and
 * the kinds an unknown kind is told to pick from depend on (default: every release).
 */
export function toIssues(errors: readonly AjvErrorObject[], profile?: Profile): ValidationIssue[] {
  // Union errors (anyOf/oneOf/if) are dropped when a branch says what is wrong. The `null` branch of
  // a nullable reference is dropped too, unless the value merely has the wrong type ("must be object
  // or null" reads better than two sentences).
  const isUnion = (e: AjvErrorObject) => e.keyword === "anyOf" || e.keyword === "oneOf" || e.keyword === "if";
  const unionPaths = new Set(errors.filter(isUnion).map((e) => e.instancePath));
  const branchErrors = (path: string) => errors.filter((o) => !isUnion(o) && isWithin(o.instancePath, path));
  const kept = errors.filter((e) => {
    if (isUnion(e)) return branchErrors(e.instancePath).length === 0;
    if (e.keyword === "type" && e.params.type === "null" && unionPaths.has(e.instancePath)) {
      return branchErrors(e.instancePath).every((o) => o.keyword === "type" && o.instancePath === e.instancePath);
    }
    return true;
  });

  // A key refused by `propertyNames`: point at the key itself; AJV's wrapper error adds nothing.
  const keyed = new Set(kept.filter((e) => e.propertyName !== undefined).map((e) => e.instancePath));
  const located = kept
    .filter((e) => !(e.keyword === "propertyNames" && keyed.has(e.instancePath)))
    .map((e) => (e.propertyName === undefined ? e : { ...e, instancePath: joinPointer(e.instancePath, e.propertyName), data: e.propertyName, keyPrefix: true }));

  const issues: ValidationIssue[] = [];
  const typeAt = new Map<string, ValidationIssue & { expected: string[] }>();
  for (const error of located) {
    const issue = messageFor(error, profile);
    if ("keyPrefix" in error) issue.message = `is not an allowed key: ${issue.message}`;
    if (error.keyword === "type") {
      // Several type errors at one place (a nullable reference, a string-or-object) read as one.
      const expected = Array.isArray(error.params.type) ? (error.params.type as string[]) : String(error.params.type).split(",");
      const previous = typeAt.get(issue.pointer);
      if (previous) {
        previous.expected.push(...expected.filter((t) => !previous.expected.includes(t)));
        previous.message = previous.message.replace(/^must be .*?, got/, `must be ${orList(previous.expected)}, got`);
        continue;
      }
      const entry = { ...issue, expected };
      typeAt.set(issue.pointer, entry);
      issues.push(entry);
      continue;
    }
    // A missing tag is reported by both `required` and the discriminator: keep one.
    if (issues.some((i) => i.pointer === issue.pointer && i.rule === issue.rule && i.message === issue.message)) continue;
    if (issue.rule === "required" && issues.some((i) => i.pointer === issue.pointer && i.rule === "required")) continue;
    issues.push(issue);
  }
  const has = (pointer: string, rules: string[]) => issues.some((i) => i.pointer === pointer && rules.includes(i.rule));
  return issues
    .filter((issue) => !has(issue.pointer, SHADOWED.get(issue.rule) ?? []))
    .map(({ pointer, rule, message }) => ({ pointer, rule, message }));
}

function isWithin(path: string, parent: string): boolean {
  return path === parent || path.startsWith(`${parent}/`);
}
