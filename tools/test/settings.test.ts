import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleSpec, type JsonObject } from "../src/bundle.js";
import { renderSettings, settingsTable } from "../src/settings.js";
import { specDir } from "./helpers.js";

/**
 * The spec side of "a field added to the spec round-trips": a copy of spec/ with four more Settings
 * fields yields the table rows that packages/server/test/settings/spec-field.test.ts feeds the server.
 */
describe("the settings table", () => {
  let dir: string;
  let defs: Record<string, JsonObject>;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "acs-settings-spec-"));
    await cp(specDir, dir, { recursive: true });
    const file = path.join(dir, "schemas/settings.yaml");
    const yaml = await readFile(file, "utf8");
    const withFields = yaml
      .replace(
        "      git_user_email: { type: [string, \"null\"] }\n",
        "      git_user_email: { type: [string, \"null\"] }\n" +
          "      extra_text: { type: [string, \"null\"] }\n" +
          "      extra_count: { type: [integer, \"null\"] }\n" +
          "      extra_flag: { type: [boolean, \"null\"], default: true }\n" +
          "      extra_token: { type: [string, \"null\"], writeOnly: true, x-secret: true, x-keep-when-null: true }\n",
      )
      .replace("required: [llm_api_key_set,", "required: [extra_token_set, llm_api_key_set,")
      .replace("      sandbox_api_key_set: { type: boolean }\n", "      sandbox_api_key_set: { type: boolean }\n      extra_token: { type: \"null\" }\n      extra_token_set: { type: boolean }\n");
    expect(withFields).not.toBe(yaml);
    await writeFile(file, withFields);
    ({ defs } = await bundleSpec(dir));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("describes a field added to the spec: type, default, secret, kept when null", () => {
    const { properties, scalars, structured } = settingsTable(defs);
    expect(properties.slice(-4)).toEqual(["extra_text", "extra_count", "extra_flag", "extra_token"]);
    expect(Object.fromEntries([...scalars].slice(-4))).toEqual({
      extra_text: { type: "string", default: null, secret: false, keepWhenNull: false },
      extra_count: { type: "integer", default: null, secret: false, keepWhenNull: false },
      extra_flag: { type: "boolean", default: true, secret: false, keepWhenNull: false },
      extra_token: { type: "string", default: null, secret: true, keepWhenNull: true },
    });
    expect(structured).toEqual(["secrets_store", "mcp_config"]);
    expect(renderSettings(defs, "banner")).toContain(
      '  extra_token: { type: "string", default: null, secret: true, keepWhenNull: true },',
    );
  });

  it("matches the policies the spec states in prose for the interface's own fields", async () => {
    const { scalars } = settingsTable((await bundleSpec(specDir)).defs);
    const where = (test: (entry: { secret: boolean; keepWhenNull: boolean; default: unknown }) => boolean) =>
      [...scalars].filter(([, entry]) => test(entry)).map(([name]) => name);
    expect(where((entry) => entry.secret)).toEqual(["llm_api_key", "search_api_key", "sandbox_api_key"]);
    expect(where((entry) => entry.keepWhenNull).sort()).toEqual(
      ["llm_api_key", "llm_model", "llm_base_url", "search_api_key", "user_consents_to_analytics", "sandbox_api_key"].sort(),
    );
    expect(where((entry) => entry.default !== null)).toEqual([
      "enable_default_condenser",
      "enable_sound_notifications",
      "enable_proactive_conversation_starters",
      "enable_solvability_analysis",
    ]);
  });

  const edited = (edit: (copy: Record<string, JsonObject>) => void) => {
    const copy = structuredClone(defs);
    edit(copy);
    return () => settingsTable(copy);
  };
  const settingsProperties = (copy: Record<string, JsonObject>) => copy.Settings!.properties as JsonObject;
  const viewProperties = (copy: Record<string, JsonObject>) => copy.SettingsView!.properties as JsonObject;

  it("refuses a secret that SettingsView does not blank and flag", () => {
    expect(edited((copy) => delete viewProperties(copy).extra_token_set)).toThrow(/extra_token_set/);
    expect(edited((copy) => delete viewProperties(copy).extra_token)).toThrow(/extra_token/);
  });

  it("refuses half a secret marking, a property it cannot describe, a default of the wrong type", () => {
    expect(edited((copy) => (settingsProperties(copy).extra_half = { type: ["string", "null"], writeOnly: true }))).toThrow(/both x-secret and writeOnly/);
    expect(edited((copy) => (settingsProperties(copy).extra_object = { type: "object" }))).toThrow(/neither a scalar/);
    expect(edited((copy) => (settingsProperties(copy).extra_bad = { type: ["number", "null"], default: "x" }))).toThrow(/not a number/);
    expect(
      edited((copy) => (settingsProperties(copy).extra_secret_number = { type: ["number", "null"], writeOnly: true, "x-secret": true })),
    ).toThrow(/secret .* must be a string/);
  });
});
