/**
 * The custom keywords of the compiled validators, shared by the build step that writes them
 * (scripts/prepare-schema.ts, scripts/compile-validators.ts) and the code that reads their errors
 * (issues.ts). Release numbers are those of `releaseNumber` in profile.ts (`1.31.0` → 1_031_000).
 */
import { INTERFACE_RELEASE } from "./profile.js";

/** Records where a legacy (deprecated) field was met: pushes its instance path onto `this.legacy`. */
export const LEGACY_KEYWORD = "x-legacy";

/**
 * On a union variant or a property outside the interface catalogue: fails when the profile's
 * release (`this.release`) is before `since` or at or after `removed`. Inert without a profile.
 * On a part of the catalogue that came after the first release (`core`), the interface profile
 * (release 0) passes too.
 */
export const RELEASE_KEYWORD = "x-acs-release";

/** On an enum with values outside the catalogue (`EventSource` `hook`): the same, value by value. */
export const VALUE_RELEASE_KEYWORD = "x-acs-release-values";

/** On a discriminated union: the releases of its marked tags, so messages list only the profile's kinds. */
export const TAG_RELEASES_KEYWORD = "x-tags-release";

/** The value of {@link RELEASE_KEYWORD}. */
export interface ReleaseMark {
  /** First release that has it, as a number, and as written in the spec. */
  since?: number;
  sinceText?: string;
  /** First release that no longer has it. */
  removed?: number;
  removedText?: string;
  /** Part of the interface 0.1.0 catalogue all the same (`x-acs-core-since`): the interface profile has it. */
  core?: true;
  /** A union variant (reported at its `kind`) or a property. */
  subject: "kind" | "property";
  /** The variant's kind, or the property's name. */
  name: string;
  /** For a variant: the union it belongs to (`Event`, `Action`, …). */
  union?: string;
  /** For a property: the title of the object it belongs to. */
  owner?: string;
}

/** The value of {@link VALUE_RELEASE_KEYWORD}: enum value → its release. */
export type ValueReleases = Record<string, { since: number; sinceText: string }>;

/** The value of {@link TAG_RELEASES_KEYWORD}: tag → [since, removed) as release numbers, and whether the tag is of the core. */
export type TagReleases = Record<string, [since: number, removed: number, core?: true]>;

/**
 * True when a thing marked [since, removed) exists in the profile's release (undefined: every
 * release); a thing of the core (`core`) exists in the interface profile's too.
 */
export function inRelease(release: number | undefined, since = 0, removed = Number.MAX_SAFE_INTEGER, core = false): boolean {
  return release === undefined || ((release >= since || (core && release === INTERFACE_RELEASE)) && release < removed);
}
