/**
 * Event timestamps as instants. Real recordings carry ISO-8601 without a zone offset; we read those
 * as UTC (ground-truth §6, "this project") and compare instants, never strings. The parser is the
 * toolkit's one (`instantMicros` of @acs-toolkit/validator), shared with the search filters, the
 * live channel's `after_timestamp`, the validator's order check and the conformance suite.
 */
export { instantMicros as eventTimeMicros } from "@acs-toolkit/schema/search";

/** ISO-8601 with microseconds and no offset (UTC), the way the reference records events. */
export function recordedTimestamp(date = new Date()): string {
  return date.toISOString().replace("Z", "").replace(/\.(\d{3})$/, ".$1000");
}

/** {@link recordedTimestamp}'s form of an instant given in microseconds UTC. */
export function timestampOfMicros(micros: number): string {
  const ms = Math.floor(micros / 1000);
  return new Date(ms).toISOString().replace("Z", "") + String(micros - ms * 1000).padStart(3, "0");
}
