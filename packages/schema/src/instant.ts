/**
 * Timestamps as instants: the one parser of the toolkit. It reads event timestamps (the spec's
 * Timestamp: ISO-8601, zone offset optional) and every form the OpenHands agent server accepts in
 * its timestamp filters (`timestamp__gte`, `timestamp__lt`, the live channel's `after_timestamp`;
 * pydantic's datetime rules):
 *
 * - `2026-02-05T11:24:47`, with a fraction (`.142819`, or `,5`), lower-case `t` or a space as the
 *   separator, without seconds (`2026-02-05T11:24`), or a date alone (`2026-02-05`, midnight);
 * - a zone: `Z`, `z`, `+02:00`, `+0200`, `-00:00`; without one the time is read as **UTC** (the
 *   agent server reads it as its local time; ground-truth §6 is our decision);
 * - fraction digits past the sixth are dropped (microseconds, as pydantic truncates them);
 * - epoch seconds (`1770290687`, `1770290687.5`, `-1`); a magnitude above 2·10¹⁰ is epoch
 *   milliseconds (`1770290687000`), as pydantic reads it.
 *
 * Refused: anything else (`2026-2-5`, `2026-02-05T11`, `T24:00`, `2026-02-30`, `2026-W06`, `now`,
 * `2e10`, surrounding spaces, `…47 +02:00`, an instant outside the years 1–9999), and exactly
 * eight bare digits: `20260205` is a compact date to a person and epoch seconds (1970-08-23) to
 * pydantic, so it is refused as ambiguous instead of silently meaning 1970.
 */

/** Epoch magnitudes above this are milliseconds, not seconds (pydantic's rule). */
const MILLISECONDS_ABOVE = 2e10;
/** 0001-01-01T00:00:00Z and 10000-01-01T00:00:00Z, microseconds since the epoch: the range of epoch values. */
const MIN_MICROS = -62_135_596_800_000_000;
const END_MICROS = 253_402_300_800_000_000;
const MAX_LENGTH = 64;

const EPOCH = /^(-?)(\d+)(?:\.(\d+))?$/;

/**
 * Microseconds since the epoch (UTC) of a timestamp text in any accepted form (see the module
 * comment), or undefined when it is not one; `instantError` says why.
 */
export function instantMicros(text: string): number | undefined {
  if (text.length < 10 || text.charCodeAt(4) !== 45 /* - */) return epochMicros(text);
  return isoMicros(text);
}

/** Why {@link instantMicros} refuses `text`, in a phrase that completes "must be …"; undefined when it does not. */
export function instantError(text: string): string | undefined {
  if (instantMicros(text) !== undefined) return undefined;
  if (/^\d{8}$/.test(text)) {
    return `an unambiguous date-time: ${text} reads as a compact date (write ${text.slice(0, 4)}-${text.slice(4, 6)}-${text.slice(6)}) or as epoch seconds (write ${text}.0)`;
  }
  return "a date-time (ISO 8601, e.g. 2026-02-05T11:24:47.142819, 2026-02-05T11:24:47Z, 2026-02-05) or epoch seconds, between the years 1 and 9999";
}

function epochMicros(text: string): number | undefined {
  const m = text.length <= MAX_LENGTH ? EPOCH.exec(text) : null;
  if (!m || (m[1] === "" && m[3] === undefined && m[2]!.length === 8)) return undefined;
  const [, sign, whole, fraction = ""] = m;
  const integer = Number(whole);
  // Exact integer arithmetic on the parts: 1770290687.5 must not become …499999 µs.
  const micros =
    integer > MILLISECONDS_ABOVE || (integer === MILLISECONDS_ABOVE && /[1-9]/.test(fraction))
      ? integer * 1_000 + Number(fraction.slice(0, 3).padEnd(3, "0"))
      : integer * 1_000_000 + Number(fraction.slice(0, 6).padEnd(6, "0"));
  const signed = sign ? -micros : micros;
  return signed >= MIN_MICROS && signed < END_MICROS ? signed : undefined;
}

function isoMicros(text: string): number | undefined {
  const length = text.length;
  if (length > MAX_LENGTH || text.charCodeAt(7) !== 45 /* - */) return undefined;
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  const midnight = daysFromCivil(year, month, day) * 86_400_000_000;
  if (length === 10) return midnight;

  const separator = text.charCodeAt(10);
  if ((separator !== 84 /* T */ && separator !== 116 /* t */ && separator !== 32) || length < 16 || text.charCodeAt(13) !== 58 /* : */) return undefined;
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59) return undefined;
  let second = 0;
  let micros = 0;
  let i = 16;
  if (text.charCodeAt(i) === 58 /* : */) {
    second = digits(text, 17, 2);
    if (second < 0 || second > 60) return undefined;
    second = Math.min(second, 59); // a leap second is read as the second before it
    i = 19;
    const mark = text.charCodeAt(i);
    if (mark === 46 /* . */ || mark === 44 /* , */) {
      const start = ++i;
      for (let scale = 100_000; i < length; i++, scale /= 10) {
        const c = text.charCodeAt(i);
        if (c < 48 || c > 57) break;
        if (scale >= 1) micros += (c - 48) * scale; // digits past the sixth are dropped
      }
      if (i === start) return undefined;
    }
  }
  let offsetMinutes = 0;
  if (i < length) {
    const c = text.charCodeAt(i);
    if (c === 90 /* Z */ || c === 122 /* z */) i++;
    else if (c === 43 /* + */ || c === 45 /* - */) {
      const colon = text.charCodeAt(i + 3) === 58 ? 1 : 0;
      const hours = digits(text, i + 1, 2);
      const minutes = digits(text, i + 3 + colon, 2);
      if (hours < 0 || hours > 23 || minutes < 0 || minutes > 59) return undefined;
      offsetMinutes = (c === 43 ? 1 : -1) * (hours * 60 + minutes);
      i += 5 + colon;
    } else return undefined;
  }
  if (i !== length) return undefined;
  // Years 1 to 9999 by construction (an offset may carry the instant a few hours past either end, as pydantic allows).
  return midnight + ((hour * 60 + minute - offsetMinutes) * 60 + second) * 1_000_000 + micros;
}

/** `count` decimal digits of `text` from `start` as a number, or -1. */
function digits(text: string, start: number, count: number): number {
  if (start + count > text.length) return -1;
  let value = 0;
  for (let i = start; i < start + count; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return -1;
    value = value * 10 + (c - 48);
  }
  return value;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Days from 1970-01-01 to a date of the proleptic Gregorian calendar (H. Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}
