/**
 * Validator profiles: which catalogue of event kinds, variants and fields a validation accepts.
 *
 * - `"releases"` (the default): everything any shipped OpenHands release (1.9.0 on) writes.
 * - `"interface"`: exactly the interface 0.1.0 catalogue (the spec's core: no `x-acs-since`; parts
 *   marked `x-acs-core-since` came with a release after 1.9.0 but are in it).
 * - a release (`"1.11.5"`): what that release writes: the core (minus its parts that came with a
 *   later release), plus what came with it or earlier, minus what an earlier release removed.
 *
 * The compiled validators compare releases as numbers (see {@link releaseNumber}); the interface
 * profile is release 0, before every marked addition, so the same comparison serves both.
 */

/** A validator profile: `"releases"`, `"interface"` or a release such as `"1.11.5"`. */
export type Profile = "releases" | "interface" | `${number}.${number}.${number}`;

/** The profile used when none is given: every shipped release. */
export const DEFAULT_PROFILE = "releases" satisfies Profile;

/** The oldest release a profile can name (the first the spec's markings cover). */
export const FIRST_RELEASE = "1.9.0" satisfies Profile;

/** The release number of the interface profile: before every release (see {@link profileRelease}). */
export const INTERFACE_RELEASE = 0;

const RELEASE = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** `"1.31.0"` → 1_031_000: the number the compiled validators compare. */
export function releaseNumber(release: string): number {
  const match = RELEASE.exec(release);
  if (!match) throw new TypeError(`not a release (major.minor.patch): ${JSON.stringify(release)}`);
  return Number(match[1]) * 1_000_000 + Number(match[2]) * 1_000 + Number(match[3]);
}

/** True when `value` names a profile the validator accepts. */
export function isProfile(value: unknown): value is Profile {
  if (value === "releases" || value === "interface") return true;
  return typeof value === "string" && RELEASE.test(value) && releaseNumber(value) >= releaseNumber(FIRST_RELEASE);
}

/**
 * The release number the compiled validators check against: undefined for `"releases"` (no
 * check), 0 for `"interface"`. Throws a TypeError naming the choices for anything else.
 */
export function profileRelease(profile: Profile | undefined): number | undefined {
  if (profile === undefined || profile === "releases") return undefined;
  if (profile === "interface") return INTERFACE_RELEASE;
  // Validation runs per event: a release is parsed once.
  let release = releases.get(profile);
  if (release === undefined) {
    if (!isProfile(profile)) {
      throw new TypeError(
        `unknown validator profile ${JSON.stringify(profile)}: use "releases" (the default), "interface", or a release from ${FIRST_RELEASE} on such as "1.11.5"`,
      );
    }
    release = releaseNumber(profile);
    if (releases.size < 64) releases.set(profile, release);
  }
  return release;
}

/** Release profiles already parsed (bounded: a caller cycling through profiles cannot grow it). */
const releases = new Map<string, number>();

/** How messages name a profile: `the interface profile`, `profile 1.11.5`. */
export function profileLabel(profile: Profile): string {
  return profile === "interface" ? "the interface profile" : `profile ${profile}`;
}
