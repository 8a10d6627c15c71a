/**
 * `GET /api/settings/secrets` over HTTP: the custom secrets stored by POST /api/settings, by name and
 * description, never their values.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { expectConforms, startTestServer, type TestServer } from "../support/harness.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

it("lists nothing on a fresh server, then each stored custom secret without its value", async () => {
  const fresh = await t.call("GET", "/api/settings/secrets");
  expectConforms("listSecrets", fresh, 200);
  expect(fresh.body).toEqual({ secrets: [] });

  const stored = await t.call("POST", "/api/settings", {
    json: { secrets_store: { custom_secrets: { PLAIN: "plain-secret-value-1", DESCRIBED: { secret: "described-secret-value-2", description: "for the deploy script" } } } },
  });
  expect(stored.status, stored.text).toBe(200);
  const listed = await t.call("GET", "/api/settings/secrets");
  expectConforms("listSecrets", listed, 200);
  expect(listed.body.secrets).toEqual(
    expect.arrayContaining([
      { name: "PLAIN", description: null },
      { name: "DESCRIBED", description: "for the deploy script" },
    ]),
  );
  expect(listed.body.secrets).toHaveLength(2);
  expect(listed.text).not.toMatch(/secret-value/);
});

it("needs the key", async () => {
  expect((await t.call("GET", "/api/settings/secrets", { key: null })).status).toBe(401);
});
