import { beforeAll, describe, expect, it } from "vitest";
import { bundleSpec, type JsonObject } from "../src/bundle.js";
import { closeCodesOf } from "../src/live.js";
import { specDir } from "./helpers.js";

describe("the live channel's close codes (x-close-codes)", () => {
  let asyncapi: JsonObject;
  beforeAll(async () => {
    ({ asyncapi } = await bundleSpec(specDir));
  });
  const channelOf = (doc: JsonObject) => (doc.channels as JsonObject).conversationEvents as JsonObject;

  it("are read from the spec, each named, numbered and explained", () => {
    expect(closeCodesOf(asyncapi).map(({ name, code }) => [name, code])).toEqual([
      ["unauthorized", 4001],
      ["notFound", 4004],
      ["badRequest", 4400],
      ["slowConsumer", 4429],
      ["tryAgainLater", 1013],
      ["goingAway", 1001],
    ]);
  });

  it("refuse a code the channel's description does not document, a duplicate, a malformed entry", () => {
    const withCodes = (edit: (codes: JsonObject[]) => void) => {
      const copy = structuredClone(asyncapi);
      edit(channelOf(copy)["x-close-codes"] as JsonObject[]);
      return () => closeCodesOf(copy);
    };
    expect(withCodes((codes) => codes.push({ name: "teapot", code: 4418, meaning: "A teapot." }))).toThrow(/does not document close code 4418/);
    expect(withCodes((codes) => codes.push({ ...codes[0]! }))).toThrow(/listed twice/);
    expect(withCodes((codes) => (codes[0]!.code = 99))).toThrow(/WebSocket close code/);
    expect(withCodes((codes) => delete codes[0]!.meaning)).toThrow(/meaning is required/);
  });
});
