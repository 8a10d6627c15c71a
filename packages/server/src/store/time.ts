/**
 * Event timestamps as instants. Real recordings carry ISO-8601 without a zone offset; we read those
 * as UTC (ground-truth §6, "this project") and compare instants, never strings.
 */
const ISO = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):?(\d{2}))?$/;

/** Microseconds since the epoch, UTC, or undefined when `text` is not an ISO-8601 date-time. */
export function eventTimeMicros(text: string): number | undefined {
  const m = ISO.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, fraction = "", , sign, oh, om] = m;
  const millis = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Math.min(Number(s), 59));
  if (Number.isNaN(millis)) return undefined;
  const micros = Number(fraction.padEnd(6, "0").slice(0, 6));
  const offsetMinutes = sign ? (sign === "-" ? -1 : 1) * (Number(oh) * 60 + Number(om)) : 0;
  return (millis - offsetMinutes * 60_000) * 1000 + micros;
}

/** ISO-8601 with microseconds and no offset (UTC), the way the reference records events. */
export function recordedTimestamp(date = new Date()): string {
  return date.toISOString().replace("Z", "").replace(/\.(\d{3})$/, ".$1000");
}
