/**
 * OpenHands' `maybe_truncate` (openhands-sdk/openhands/sdk/utils/truncate.py) without a save
 * directory: a text over the limit keeps its head and tail around a notice, the whole exactly
 * `limit` characters long. The SDK saves the full text to a file only when it is given a directory
 * (`full_output_save_dir`, its conversation's persistence directory); this runtime has none, so
 * nothing is saved and the notice says only that the output was clipped.
 */

/** The SDK's `DEFAULT_TRUNCATE_NOTICE`. */
const TRUNCATE_NOTICE = "<response clipped><NOTE>Due to the max output limit, only part of the full response has been shown to you.</NOTE>";

/** `text` when it fits in `limit` characters; else its head (the larger half), the notice, and its tail. */
export function maybeTruncate(text: string, limit: number): string {
  if (limit <= 0 || text.length <= limit) return text;
  if (TRUNCATE_NOTICE.length >= limit) return TRUNCATE_NOTICE.slice(0, limit);
  const available = limit - TRUNCATE_NOTICE.length;
  const head = Math.ceil(available / 2);
  const tail = available - head;
  return text.slice(0, head) + TRUNCATE_NOTICE + (tail > 0 ? text.slice(-tail) : "");
}
