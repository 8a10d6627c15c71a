import type { Event, EventPage } from "@acs-toolkit/schema";
import * as fast from "../generated/validators-fast.js";
import * as full from "../generated/validators-full.js";
import { formatIssue, toIssues, type ValidationIssue } from "./issues.js";
import { profileRelease, type Profile } from "./profile.js";
import type { StandaloneValidator, ValidationContext } from "./standalone.js";

export interface ValidateOptions {
  /**
   * Which catalogue to accept. `"releases"` (default): everything a shipped OpenHands release
   * (1.9.0 on) writes. `"interface"`: exactly the interface 0.1.0 catalogue. A release
   * (`"1.11.5"`): what that release writes. Kinds and properties outside the profile are reported
   * as unknown kinds and unknown properties, so the two options below apply to them too.
   */
  profile?: Profile;
  /**
   * A `kind` that names no known variant (an event, action, observation or tool kind from a newer
   * version, or outside the profile): `"error"` (default) rejects it, `"warn"` accepts it with a
   * warning.
   */
  unknownKinds?: "error" | "warn";
  /** A property a strict object (or the profile) does not declare: `"error"` (default) or `"warn"`. */
  unknownProperties?: "error" | "warn";
}

export interface ValidationResult {
  /** True when there is no error; warnings do not make a value invalid. */
  ok: boolean;
  errors: ValidationIssue[];
  /** Legacy fields (always), and unknown kinds or properties when the options say `"warn"`. */
  warnings: ValidationIssue[];
}

const LEGACY_MESSAGE = "is a legacy field (SDK 1.9): accepted, but current readers drop it";

function run(
  fastValidate: StandaloneValidator,
  fullValidate: StandaloneValidator,
  value: unknown,
  options: ValidateOptions,
): ValidationResult {
  // An unknown profile is a programming error: it throws (a TypeError naming the choices).
  const context: ValidationContext = { legacy: [], release: profileRelease(options.profile) };
  try {
    if (fastValidate.call(context, value)) {
      return { ok: true, errors: [], warnings: context.legacy.length === 0 ? [] : context.legacy.map(legacyIssue) };
    }
    // Failure path only: validate again collecting every error with its schema.
    context.legacy = [];
    fullValidate.call(context, value);
    const errors: ValidationIssue[] = [];
    const warnings: ValidationIssue[] = [];
    const issues = toIssues(fullValidate.errors ?? [], options.profile);
    // A legacy field the profile does not have is reported once, as unknown.
    const unknown = new Set(issues.filter((issue) => issue.rule === "unknownProperty").map((issue) => issue.pointer));
    for (const pointer of context.legacy) if (!unknown.has(pointer)) warnings.push(legacyIssue(pointer));
    for (const issue of issues) {
      const demoted =
        (issue.rule === "unknownKind" && options.unknownKinds === "warn") ||
        (issue.rule === "unknownProperty" && options.unknownProperties === "warn");
      (demoted ? warnings : errors).push(issue);
    }
    if (errors.length === 0 && warnings.length === 0) {
      // Cannot happen with a consistent pair of validators; never report "invalid" without a reason.
      errors.push({ pointer: "", rule: "internal", message: "was rejected without a reported reason" });
    }
    return { ok: errors.length === 0, errors, warnings };
  } catch (error) {
    // A throwing getter, a Proxy, a stack overflow: a result, never an exception.
    const reason = error instanceof Error ? error.message : String(error);
    return { ok: false, errors: [{ pointer: "", rule: "internal", message: `could not be validated: ${reason}` }], warnings: [] };
  }
}

function legacyIssue(pointer: string): ValidationIssue {
  return { pointer, rule: "legacyField", message: LEGACY_MESSAGE };
}

/**
 * Validates one event against the spec.
 *
 * @example
 * const result = validateEvent(JSON.parse(line));
 * if (!result.ok) console.error(result.errors.map(formatIssue).join("\n"));
 */
export function validateEvent(value: unknown, options: ValidateOptions = {}): ValidationResult {
  return run(fast.validateEvent, full.validateEvent, value, options);
}

/** Validates one page of event search (`{ items, next_page_id }`); pointers start at the page. */
export function validateEventPage(value: unknown, options: ValidateOptions = {}): ValidationResult {
  return run(fast.validateEventPage, full.validateEventPage, value, options);
}

/** True when `value` is a valid event (with the default options: every release, strict); narrows it to `Event`. */
export function isEvent(value: unknown): value is Event {
  try {
    return fast.validateEvent.call(undefined, value);
  } catch {
    return false;
  }
}

/** True when `value` is a valid EventPage; narrows it. */
export function isEventPage(value: unknown): value is EventPage {
  try {
    return fast.validateEventPage.call(undefined, value);
  } catch {
    return false;
  }
}

/** Thrown by {@link assertEvent}; `issues` holds every error. */
export class EventValidationError extends Error {
  override readonly name = "EventValidationError";
  constructor(
    readonly issues: ValidationIssue[],
    readonly warnings: ValidationIssue[] = [],
  ) {
    super(`invalid event:\n  ${issues.map(formatIssue).join("\n  ")}`);
  }
}

/** Throws an {@link EventValidationError} listing every error unless `value` is a valid event. */
export function assertEvent(value: unknown, options: ValidateOptions = {}): asserts value is Event {
  const result = validateEvent(value, options);
  if (!result.ok) throw new EventValidationError(result.errors, result.warnings);
}
