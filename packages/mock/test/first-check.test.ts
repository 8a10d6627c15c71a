/**
 * Prism's first check of a request (route, key present, path and query parameters) is done once per
 * request line and headers: a request sent again gets the same answer from the check kept, and a
 * request that differs in a header is checked on its own.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { KEY, startTestMock, type TestMock } from "./support.js";

const checked = vi.hoisted(() => [] as Array<{ method: string; url: { path: string; query?: unknown } }>);
vi.mock("../src/prism.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../src/prism.js")>();
  return {
    ...original,
    createValidatingPrism: () => {
      const prism = original.createValidatingPrism();
      const request = prism.request;
      prism.request = (input, ...rest) => {
        checked.push(input);
        return request(input, ...rest);
      };
      return prism;
    },
  };
});

let mock: TestMock;
let search: string;
beforeAll(async () => {
  mock = await startTestMock({ scenarios: ["happy"], publicRead: false });
  search = `/api/conversations/${mock.mock.world.scenarios[0]!.conversationId}/events/search`;
});
afterAll(() => mock?.close());

describe("Prism's first check", () => {
  it("is done once for a request sent again, which gets the same answer", async () => {
    checked.length = 0;
    const first = await mock.call("GET", search, { query: { limit: 3 } });
    const again = await mock.call("GET", search, { query: { limit: 3 } });
    expect(first.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(checked).toHaveLength(1);
    // Another query is another request.
    expect((await mock.call("GET", search, { query: { limit: 4 } })).body.items).toHaveLength(4);
    expect(checked).toHaveLength(2);
  });

  it("keeps a violation's 422 and a missing key's 401 apart from the same URL's 200", async () => {
    checked.length = 0;
    for (let i = 0; i < 2; i++) {
      const bad = await mock.call("GET", search, { query: { limit: 0 } });
      expect(bad.status).toBe(422);
      expect(bad.body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([["query", "limit"]]);
      expect((await mock.call("GET", search, { key: null, query: { limit: 2 } })).status).toBe(401);
      expect((await mock.call("GET", search, { key: KEY, query: { limit: 2 } })).status).toBe(200);
      expect((await mock.call("GET", search, { key: "not-the-key", query: { limit: 2 } })).status).toBe(401);
    }
    expect(checked).toHaveLength(4);
  });
});
