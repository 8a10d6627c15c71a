/**
 * File names of uploads: which names a client may store, and when two names are the same one.
 * Every name goes through {@link sanitizeFileName}, which rejects (never "repairs") anything that
 * is not one plain file name.
 *
 * Name rules (all checked after NFC normalisation; the first that applies gives the reason):
 * - `empty_name`: empty or whitespace only (a file part without a file name counts as empty).
 * - `absolute_path`: starts with `/` or `\` (this covers `\\server\share` and `//server/share`), or
 *   with a drive letter and a colon (`C:\x`, `C:x`).
 * - `path_traversal`: a `..` segment anywhere, split on `/` and `\` (`..`, `../x`, `a/../../b`, `x/..`).
 * - `invalid_name`:
 *   - a folder separator (`/` or `\`) even when it does not escape (`docs/readme.md`). Decision: we
 *     reject rather than keep the base name, because keeping it would silently turn two different
 *     names (`a/x`, `b/x`) into one and the stored folder is flat (one `file_urls` segment per file);
 *   - control characters (U+0000–U+001F, U+007F–U+009F), bidirectional embedding/override/isolate
 *     controls (U+202A–U+202E, U+2066–U+2069; they can disguise an extension) and unpaired surrogates;
 *   - only dots (`.`, `...`);
 *   - a trailing dot or space, and any of `< > : " | ? *`, and the Windows device names (`CON`,
 *     `PRN`, `AUX`, `NUL`, `COM0`–`COM9`, `LPT0`–`LPT9`, `CONIN$`, `CONOUT$`, with or without an
 *     extension, any case). Decision: rejected on every platform, so that the same upload gives the
 *     same answer wherever the server runs and a stored folder can be copied to Windows. (Windows
 *     strips trailing dots and spaces, so `a.txt.` would alias `a.txt`; `:` opens NTFS streams.)
 *   - more than 255 bytes in UTF-8 (the usual file-system limit for one name);
 *   - a name starting with `.acs-upload-`, reserved for the upload core's temporary files;
 *   - an invisible or format character: format controls (Cf: U+200B zero width space, U+FEFF byte
 *     order mark, U+00AD soft hyphen, U+200D zero width joiner, bidi marks…), default-ignorable
 *     code points (U+3164 Hangul filler…), spaces other than U+0020 (U+00A0, U+3000, U+2009…),
 *     line and paragraph separators and noncharacters. Decision: refused, not stripped — a name is
 *     never repaired — because they make two different names look the same (`a.txt` and
 *     `a\u200B.txt`). This refuses the joiners that some scripts and emoji sequences use, too;
 *   - U+FFFD, the replacement character: it is what a name that was not valid UTF-8 decodes to,
 *     and keeping it would make different byte strings (`a\xFF`, `a\xFE`) one name.
 * - `duplicate_name` (besides an exact repeat): a name that differs from a stored one, or from one
 *   earlier in the request, only by case (`Report.csv`, `REPORT.CSV`; compared after full case
 *   folding, so `straße` and `STRASSE` are one name; see {@link foldedName}). Decision: one name per
 *   folder whatever the file system's case rules, so that a folder copies to macOS and Windows
 *   without collisions.
 * Anything else is valid, including Unicode (`résumé.pdf`, `数据.csv`), spaces inside, and a leading
 * dot (`.env`). Look-alike characters (`∕`, `／`) are plain characters on every file system, which is
 * why names are normalised to NFC and not NFKC.
 */
import type { SkippedFile as GeneratedSkippedFile } from "@acs-toolkit/schema";

/** Why a file was skipped: the `SkippedFile.reason` enum of the spec (schemas/conversations.yaml). */
export type SkipReason = SkippedFile["reason"];

/** One skipped file, as the spec's `SkippedFile` (`name` cut to 1024 characters with "…" when longer). */
export type SkippedFile = Pick<GeneratedSkippedFile, "name" | "reason" | "detail">;

type SanitizedName = { ok: true; name: string } | { ok: false; reason: SkipReason; detail: string };

/** Temporary files are `<prefix><32 hex digits>.part` in the upload folder; no valid name starts so. */
export const TEMP_FILE_PREFIX = ".acs-upload-";

const MAX_NAME_BYTES = 255;

/** C0 controls, DEL and C1 controls (U+0000–U+001F, U+007F–U+009F). */
function hasControlCharacter(name: string): boolean {
  for (let i = 0; i < name.length; i++) {
    const code = name.charCodeAt(i);
    if (code <= 0x1f || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}
const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069]/u;
/** Characters that do not show (or show as a plain space): see the module comment. */
const INVISIBLE = /[\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\p{Noncharacter_Code_Point}]|(?!\u0020)\p{Zs}/u;
const LONE_SURROGATE = /\p{Cs}/u;
const WINDOWS_FORBIDDEN = /[<>:"|?*]/u;
const WINDOWS_DEVICE = /^(?:con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)(?:\s*\..*)?$/iu;

function reject(reason: SkipReason, detail: string): SanitizedName {
  return { ok: false, reason, detail };
}

/**
 * Checks one file name as sent by a client and returns it normalised to NFC, or why it is refused.
 * A refused name is never repaired into another one (see the module comment for the rules).
 */
export function sanitizeFileName(raw: string): SanitizedName {
  if (typeof raw !== "string") return reject("invalid_name", "The file name is not text.");
  if (LONE_SURROGATE.test(raw)) return reject("invalid_name", "The file name is not valid Unicode text.");
  const name = raw.normalize("NFC");
  if (name.trim() === "") return reject("empty_name", "The file has no name.");
  if (name.startsWith("/") || name.startsWith("\\")) {
    return reject("absolute_path", "The name is an absolute path, not a file name.");
  }
  if (/^[A-Za-z]:/u.test(name)) return reject("absolute_path", "The name starts with a drive letter, not a file name.");
  const segments = name.split(/[/\\]/u);
  if (segments.includes("..")) return reject("path_traversal", "The name leaves the upload folder.");
  if (segments.length > 1) {
    return reject("invalid_name", "The name contains a folder separator (/ or \\); send the plain file name.");
  }
  if (hasControlCharacter(name)) return reject("invalid_name", "The name contains a control character.");
  if (BIDI_CONTROL.test(name)) {
    return reject("invalid_name", "The name contains a bidirectional text control, which can disguise it.");
  }
  if (name.includes("\uFFFD")) {
    return reject("invalid_name", "The name is not valid UTF-8 (or holds U+FFFD, the replacement character).");
  }
  const invisible = INVISIBLE.exec(name)?.[0];
  if (invisible !== undefined) {
    const codePoint = `U+${invisible.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
    return reject("invalid_name", `The name contains an invisible or format character (${codePoint}), which makes names look alike.`);
  }
  if (/^\.+$/u.test(name)) return reject("invalid_name", "The name is only dots.");
  if (/[. ]$/u.test(name)) return reject("invalid_name", "The name ends with a dot or a space.");
  if (WINDOWS_FORBIDDEN.test(name)) {
    return reject("invalid_name", 'The name contains one of the characters < > : " | ? * that file systems forbid.');
  }
  if (WINDOWS_DEVICE.test(name)) return reject("invalid_name", "The name is a reserved device name on Windows.");
  if (Buffer.byteLength(name, "utf8") > MAX_NAME_BYTES) {
    return reject("invalid_name", `The name is longer than ${MAX_NAME_BYTES} bytes.`);
  }
  if (name.startsWith(TEMP_FILE_PREFIX)) {
    return reject("invalid_name", "The name is reserved for the server's temporary files.");
  }
  return { ok: true, name };
}

/** A name as compared for duplicates: full case folding (`ß` and `SS` fold alike), after NFC. */
export function foldedName(name: string): string {
  return name.normalize("NFC").toUpperCase().toLowerCase();
}
