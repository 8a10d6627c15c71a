/**
 * @packageDocumentation
 * Validation of Agent Conversation Service events: one event, a page of event search, or a whole
 * recorded trajectory, with errors that name the JSON pointer, the rule and a readable sentence. By
 * default everything a shipped OpenHands release writes is accepted; the `profile` option narrows
 * that to the interface 0.1.0 catalogue or to one release.
 *
 * The validators are AJV standalone code compiled from the spec at build time: importing this
 * module compiles nothing, has no dependencies and runs in browsers under a strict CSP.
 */
export {
  validateEvent,
  validateEventPage,
  isEvent,
  isEventPage,
  assertEvent,
  EventValidationError,
  type ValidateOptions,
  type ValidationResult,
} from "./validate.js";
export {
  validateTrajectory,
  checkSequence,
  trajectoryEntries,
  type TrajectoryEntry,
  type TrajectoryInput,
  type TrajectoryIssue,
  type TrajectoryOptions,
  type TrajectoryResult,
} from "./trajectory.js";
export { TrajectoryChecker, SEQUENCE_RULES, type SequenceResult, type SequenceRule } from "./sequence.js";
export { DEFAULT_PROFILE, FIRST_RELEASE, isProfile, type Profile } from "./profile.js";
export { locatePointer, type TextLocation } from "./locate.js";
export { formatIssue, describeValue, toIssues, type IssueRule, type ValidationIssue } from "./issues.js";
export type { AjvErrorObject } from "./standalone.js";
export { joinPointer, pointerTokens, resolvePointer } from "./pointer.js";
// Search's meaning lives with the interface's types; kept here for code that imported it from the validator.
export { eventMatches, eventSource, instantError, instantMicros, kindShortName, searchableText, type EventFilters, type SearchableEvent } from "@acs-toolkit/schema/search";
