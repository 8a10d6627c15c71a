/**
 * A field added to the spec round-trips with no hand edit. `@acs-toolkit/schema` is replaced by a copy
 * whose generated settings table has four more fields, exactly as `pnpm generate` would write them for
 * four more properties of Settings (tools/test/settings.test.ts checks that side); the server, built
 * over that table, must store, return and keep them, over HTTP and through the stored document.
 */
import { randomBytes } from "node:crypto";
import type { Settings, SETTINGS_FIELDS as SpecFields } from "@acs-toolkit/schema";
import { afterAll, beforeAll, describe, expect, expectTypeOf, it, vi } from "vitest";
import { createCipher } from "../../src/secrets.js";
import { decryptedSecrets, parseStoredSettings, settingsView, storeSettings, type StoredSettings } from "../../src/sealed-settings.js";
import { startTestServer, type TestServer } from "../support/harness.js";

// Hoisted with the mock below, which runs before this file's imports.
const EXTRA_FIELDS = vi.hoisted(
  () =>
    ({
      extra_text: { type: "string", default: null, secret: false, keepWhenNull: false },
      extra_count: { type: "integer", default: null, secret: false, keepWhenNull: false },
      extra_flag: { type: "boolean", default: true, secret: false, keepWhenNull: false },
      extra_token: { type: "string", default: null, secret: true, keepWhenNull: true },
    }) as const,
);

vi.mock("@acs-toolkit/schema", async (importOriginal) => {
  const actual = await importOriginal<typeof import("@acs-toolkit/schema")>();
  return {
    ...actual,
    SETTINGS_PROPERTIES: [...actual.SETTINGS_PROPERTIES, ...Object.keys(EXTRA_FIELDS)],
    SETTINGS_FIELDS: { ...actual.SETTINGS_FIELDS, ...EXTRA_FIELDS },
  };
});

const cipher = createCipher(randomBytes(32));
const TOKEN = "EXTRA-TOKEN-0123456789abcdef";
const given = { extra_text: "hello", extra_count: 7, extra_flag: false, extra_token: TOKEN };

/** The document as the server persists it (through JSON, like the key-value store). */
const persisted = (document: StoredSettings) => parseStoredSettings(JSON.stringify(document)) as StoredSettings & Record<string, unknown>;

describe("a field added to the spec's Settings", () => {
  it("is stored (the secret sealed) and read back", () => {
    const stored = persisted(storeSettings(undefined, { language: "en", ...given } as Settings, cipher));
    expect(stored).toMatchObject({ extra_text: "hello", extra_count: 7, extra_flag: false });
    expect(stored.extra_token).toEqual(expect.stringMatching(/^v1:/));
    expect(JSON.stringify(stored)).not.toContain(TOKEN);
    expect((decryptedSecrets(stored, cipher) as unknown as Record<string, unknown>).extra_token).toBe(TOKEN);
  });

  it("is returned by the view: plain fields as stored, the secret blanked with its _set flag", () => {
    const view = settingsView(persisted(storeSettings(undefined, given as Settings, cipher)));
    expect(view).toMatchObject({ extra_text: "hello", extra_count: 7, extra_flag: false, extra_token: null, extra_token_set: true });
    expect(JSON.stringify(view)).not.toContain(TOKEN);
  });

  it("takes its default or null when absent, and the kept secret survives a round trip", () => {
    const first = persisted(storeSettings(undefined, given as Settings, cipher));
    const second = persisted(storeSettings(first, { ...settingsView(first) } as Settings, cipher));
    expect(settingsView(second)).toMatchObject({ extra_text: "hello", extra_count: 7, extra_flag: false, extra_token_set: true });
    const emptied = persisted(storeSettings(second, {}, cipher));
    expect(settingsView(emptied)).toMatchObject({ extra_text: null, extra_count: null, extra_flag: true, extra_token: null, extra_token_set: true });
    expect(settingsView(persisted(storeSettings(emptied, { extra_token: "" } as Settings, cipher)))).toMatchObject({ extra_token_set: false });
  });

  it("is refused with a type error naming it, never its value, when of the wrong JSON type", () => {
    expect(() => storeSettings(undefined, { extra_count: "seven" } as Settings, cipher)).toThrow(/^extra_count must be/);
    expect(() => storeSettings(undefined, { extra_token: 42 } as unknown as Settings, cipher)).toThrow(/^extra_token must be/);
  });

  it("is typed: the stored document is keyed by the generated table", () => {
    expectTypeOf<keyof StoredSettings>().toEqualTypeOf<"version" | keyof typeof SpecFields | "mcp_config" | "provider_tokens" | "custom_secrets" | "misc_settings">();
  });
});

describe("over HTTP", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  it("POST /api/settings stores it, GET /api/settings returns it, a read-modify-write keeps the secret", async () => {
    expect((await t.call("POST", "/api/settings", { json: given })).status).toBe(200);
    const read = await t.call("GET", "/api/settings");
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ extra_text: "hello", extra_count: 7, extra_flag: false, extra_token: null, extra_token_set: true });
    expect(JSON.stringify(read.body)).not.toContain(TOKEN);

    expect((await t.call("POST", "/api/settings", { json: { ...read.body, extra_text: "changed" } })).status).toBe(200);
    expect((await t.call("GET", "/api/settings")).body).toMatchObject({ extra_text: "changed", extra_token_set: true });
  });
});
