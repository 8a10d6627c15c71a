/**
 * The toolkit's one timestamp parser: every form the OpenHands agent server accepts in its
 * timestamp filters (pydantic's datetime rules, openhands-versions §5.4), minus its traps.
 */
import { describe, expect, it } from "vitest";
import { instantError, instantMicros } from "../src/search.js";

/** 2026-02-05T11:24:47Z in microseconds. */
const AT = Date.UTC(2026, 1, 5, 11, 24, 47) * 1000;
const MIDNIGHT = Date.UTC(2026, 1, 5) * 1000;

describe("instantMicros", () => {
  it.each<[string, number]>([
    ["2026-02-05T11:24:47", AT],
    ["2026-02-05T11:24:47.142819", AT + 142_819],
    ["2026-02-05T11:24:47,5", AT + 500_000],
    ["2026-02-05t11:24:47", AT],
    ["2026-02-05 11:24:47", AT],
    ["2026-02-05", MIDNIGHT],
    ["2026-02-05T11:24", AT - 47_000_000],
    ["2026-02-05T11:24:47Z", AT],
    ["2026-02-05T11:24:47z", AT],
    ["2026-02-05T13:24:47+02:00", AT],
    ["2026-02-05T13:24:47+0200", AT],
    ["2026-02-05T11:24:47-00:00", AT],
    ["2026-02-05T09:24:47.25-02:00", AT + 250_000],
    ["2026-02-05T11:24:47.1428199999", AT + 142_819],
    ["2026-02-05T11:24:60", AT + 12_000_000],
    ["1770290687", 1_770_290_687_000_000],
    ["1770290687.5", 1_770_290_687_500_000],
    ["1770290687000", 1_770_290_687_000_000],
    ["1770290687000.25", 1_770_290_687_000_250],
    ["-1", -1_000_000],
    ["0", 0],
    ["20260205.0", 20_260_205_000_000],
    ["0001-01-01T00:00:00Z", new Date("0001-01-01T00:00:00Z").getTime() * 1000],
    ["2024-02-29T00:00:00Z", Date.UTC(2024, 1, 29) * 1000],
    ["9999-12-31T23:59:59.999999", Date.UTC(9999, 11, 31, 23, 59, 59) * 1000 + 999_999],
  ])("%s", (text, micros) => {
    expect(instantMicros(text)).toBe(micros);
    expect(instantError(text)).toBeUndefined();
  });

  it("reads years before 100 as themselves (not as 19xx, as Date.UTC would)", () => {
    expect(instantMicros("0026-02-05T00:00:00Z")).toBe(new Date("0026-02-05T00:00:00Z").getTime() * 1000);
  });

  it.each([
    "2026-2-5",
    "2026-02-05T11",
    "2026-02-05T25:00",
    "2026-02-05T24:00:00",
    "2026-02-30",
    "2025-02-29",
    "2026-13-01",
    "2026-W06",
    "now",
    "2e10",
    "",
    " 2026-02-05",
    "2026-02-05 ",
    "2026-02-05T11:24:47 +02:00",
    "2026-02-05T11:24:47+02",
    "2026-02-05T11:24:47.",
    "2026-02-05Z",
    "+1770290687",
    "0000-01-01T00:00:00Z",
    "99999999999999999999",
  ])("refuses %j", (text) => {
    expect(instantMicros(text)).toBeUndefined();
    expect(instantError(text)).toMatch(/^a date-time/);
  });

  it("refuses eight bare digits as ambiguous (a compact date, or epoch seconds in 1970)", () => {
    expect(instantMicros("20260205")).toBeUndefined();
    expect(instantError("20260205")).toBe("an unambiguous date-time: 20260205 reads as a compact date (write 2026-02-05) or as epoch seconds (write 20260205.0)");
    expect(instantMicros("-20260205")).toBe(-20_260_205_000_000);
    expect(instantMicros("120260205")).toBe(120_260_205_000_000);
  });
});
