/**
 * Secrets never leave: a scan of every response body, every log line and every file of the data
 * directory for the secrets the test stored finds none. And uploads through the HTTP route.
 */
import { createHash, randomBytes } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCipher, loadSecretKey } from "../../src/secrets.js";
import { decryptedSecrets, parseStoredSettings } from "../../src/sealed-settings.js";
import { buildMultipart, MULTIPART_TYPE, rawPost } from "../uploads/harness.js";
import { expect422, expectConforms, KEY, specValidators, startTestServer, type Reply, type TestServer } from "../support/harness.js";

const SECRETS = {
  llm: "sk-llm-SECRET-5c1f0e",
  search: "tvly-SECRET-search-77aa",
  sandbox: "sbx-SECRET-sandbox-19bd",
  github: "ghp_SECRETgithubtoken0042",
  gitlab: "glpat-SECRET-gitlab-9981",
  custom: "custom-SECRET-value-4410",
  mcp: "mcp-SECRET-apikey-3321",
  mcpEnv: "ghp_SECRET-stdio-env-6642",
};

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(entries.map((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)])));
  return nested.flat();
}

describe("secrets never appear in a response, a log line or a stored file", () => {
  let t: TestServer;
  const replies: Reply[] = [];
  const call: TestServer["call"] = async (...args) => {
    const reply = await t.call(...args);
    replies.push(reply);
    return reply;
  };

  beforeAll(async () => {
    t = await startTestServer();
    await call("POST", "/api/settings", {
      json: {
        llm_model: "gpt-4o",
        llm_api_key: SECRETS.llm,
        search_api_key: SECRETS.search,
        sandbox_api_key: SECRETS.sandbox,
        secrets_store: { custom_secrets: { DB_PASSWORD: { secret: SECRETS.custom, description: "db" } } },
        mcp_config: {
          sse_servers: [{ url: "https://mcp.example.com/sse", api_key: SECRETS.mcp }],
          stdio_servers: [{ name: "github", command: "npx", args: ["-y", "@modelcontextprotocol/server-github"], env: { GITHUB_TOKEN: SECRETS.mcpEnv } }],
          shttp_servers: [],
        },
      },
    });
    await call("POST", "/api/add-git-providers", {
      json: { provider_tokens: { github: { token: SECRETS.github, host: "github.com" }, gitlab: { token: SECRETS.gitlab, host: null } } },
    });
    // Everything a client can ask, including failures that echo input.
    await call("GET", "/api/settings");
    await call("POST", "/api/settings", { json: { llm_api_key: null, language: "en" } });
    await call("GET", "/api/settings");
    await call("POST", "/api/add-git-providers", { json: { provider_tokens: { github: { token: "", host: "github.com" } } } });
    await call("GET", "/api/settings");
    await call("POST", "/api/settings", { json: { llm_api_key: 5, search_api_key: { nested: SECRETS.search } } });
    await call("POST", "/api/add-git-providers", { json: { provider_tokens: { github: { token: 7 } } } });
    await call("POST", "/api/settings", { json: { mcp_config: { stdio_servers: [{ name: "x", command: "y", env: { T: { nested: SECRETS.mcpEnv } } }] } } });
    await call("POST", "/api/settings", { key: SECRETS.llm, json: {} });
    await call("POST", "/api/conversations", { json: { initial_user_msg: "hello", mcp_config: { sse_servers: [{ url: "x", api_key: SECRETS.mcp }] } } });
    await call("GET", "/openapi.json");
    await call("GET", "/health");
  });
  afterAll(() => t.close());

  it("the settings were stored and are reported as set", async () => {
    const view = await t.call("GET", "/api/settings");
    expectConforms("getSettings", view, 200);
    // The second add-git-providers named only github: the stored map is replaced (gitlab gone),
    // and github's empty token kept the stored one.
    expect(view.body).toMatchObject({ llm_api_key_set: true, search_api_key_set: true, sandbox_api_key_set: true, provider_tokens_set: { github: "github.com" } });
  });

  it("stdio env values read back blanked, named in env_set, and kept when the view is posted back", async () => {
    const server = { name: "github", command: "npx", args: ["-y", "@modelcontextprotocol/server-github"], env: { GITHUB_TOKEN: SECRETS.mcpEnv } };
    expectConforms("storeSettings", await call("POST", "/api/settings", { json: { mcp_config: { stdio_servers: [server] } } }), 200);
    const view = await call("GET", "/api/settings");
    expectConforms("getSettings", view, 200);
    expect(view.body.mcp_config.stdio_servers).toEqual([
      { name: "github", command: "npx", args: ["-y", "@modelcontextprotocol/server-github"], env: { GITHUB_TOKEN: null }, env_set: ["GITHUB_TOKEN"] },
    ]);
    const cipher = createCipher(loadSecretKey({ dataDir: t.dataDir, env: {} }));
    const envOf = async () => decryptedSecrets(parseStoredSettings((await t.server.store.getDocument("settings"))!), cipher).mcp_config?.stdio_servers[0]?.env;
    expect(await envOf()).toEqual({ GITHUB_TOKEN: SECRETS.mcpEnv });
    expectConforms("storeSettings", await call("POST", "/api/settings", { json: view.body }), 200);
    expect(await envOf()).toEqual({ GITHUB_TOKEN: SECRETS.mcpEnv });
  });

  it.each(Object.entries(SECRETS))("%s is in no response body or header", (_name, secret) => {
    for (const reply of replies) {
      expect(reply.text).not.toContain(secret);
      const headers: string[] = [];
      reply.headers.forEach((value, name) => headers.push(`${name}: ${value}`));
      expect(headers.join("\n")).not.toContain(secret);
    }
  });

  it.each(Object.entries(SECRETS))("%s is in no log line", (_name, secret) => {
    expect(t.logs.length).toBeGreaterThan(10);
    for (const line of t.logs) expect(line).not.toContain(secret);
  });

  it.each(Object.entries(SECRETS))("%s is stored encrypted (in no file of the data directory)", async (_name, secret) => {
    for (const file of await filesUnder(t.dataDir)) {
      const bytes = await readFile(file);
      expect(bytes.includes(Buffer.from(secret)), file).toBe(false);
    }
  });
});

describe("uploads through the route", () => {
  let t: TestServer;
  let id: string;
  beforeAll(async () => {
    t = await startTestServer(["--max-file-bytes", String(1024 * 1024)]);
    id = (await t.call("POST", "/api/conversations", { json: {} })).body.conversation_id;
  });
  afterAll(() => t.close());

  const upload = (files: Array<[string, Buffer | string]>, conversation = id) => {
    const form = new FormData();
    for (const [name, content] of files) form.append("files", new Blob([typeof content === "string" ? content : new Uint8Array(content)]), name);
    return t.call("POST", `/api/conversations/${conversation}/upload-files`, { body: form });
  };

  it("a binary file round-trips byte-exact through file_urls", async () => {
    const bytes = randomBytes(512 * 1024);
    const reply = await upload([["data.bin", bytes]]);
    expectConforms("uploadFiles", reply, 200);
    expect(reply.body).toMatchObject({ skipped_files: [], skipped_reasons: [] });
    expect(reply.body.file_urls).toEqual([`/api/conversations/${id}/files/data.bin`]);
    const download = await fetch(new URL(reply.body.file_urls[0], t.url), { headers: { "X-Session-API-Key": "test-session-key-0123456789" } });
    expect(download.status).toBe(200);
    const received = Buffer.from(await download.arrayBuffer());
    expect(createHash("sha256").update(received).digest("hex")).toBe(createHash("sha256").update(bytes).digest("hex"));
  });

  it("skips a file over the limit with its reason", async () => {
    const reply = await upload([["big.bin", randomBytes(1024 * 1024 + 1)], ["small.txt", "ok"]]);
    expectConforms("uploadFiles", reply, 200);
    expect(reply.body.file_urls).toEqual([`/api/conversations/${id}/files/small.txt`]);
    expect(reply.body.skipped_files).toEqual(["big.bin"]);
    expect(reply.body.skipped_reasons[0]).toMatchObject({ name: "big.bin", reason: "file_too_large" });
  });

  it("skips every hostile name with its reason and stores the good one", async () => {
    const hostile = ["../x", "/etc/passwd", "a/../../b", "..", "", "x\ny", "\u0007bell.txt"];
    // Control characters travel percent-encoded in filename*, as a raw one would break the part header.
    const body = buildMultipart(
      [...hostile, "good.txt"].map((name) => ([...name].some((c) => c.charCodeAt(0) < 0x20) ? { filenameStar: name, data: "payload" } : { filename: name, data: "payload" })),
    );
    const before = await filesUnder(t.dataDir);
    const reply = await rawPost(`${t.url}/api/conversations/${id}/upload-files`, body, { "content-type": MULTIPART_TYPE, "x-session-api-key": KEY });
    expect(reply.status).toBe(200);
    expect(specValidators.response("uploadFiles", 200, reply.json)).toEqual([]);
    expect(reply.json.file_urls).toEqual([`/api/conversations/${id}/files/good.txt`]);
    expect(reply.json.skipped_files).toEqual(hostile);
    expect(reply.json.skipped_reasons.map((r: { reason: string }) => r.reason)).toEqual([
      "path_traversal", "absolute_path", "path_traversal", "path_traversal", "empty_name", "invalid_name", "invalid_name",
    ]);
    // Exactly one new file in the whole data directory, inside the conversation's folder.
    const added = (await filesUnder(t.dataDir)).filter((f) => !before.includes(f));
    expect(added).toEqual([path.join(t.dataDir, "uploads", id, "good.txt")]);
  });

  it("skips a duplicate", async () => {
    await upload([["twice.txt", "1"]]);
    const reply = await upload([["twice.txt", "2"]]);
    expect(reply.body.skipped_reasons).toEqual([expect.objectContaining({ name: "twice.txt", reason: "duplicate_name" })]);
  });

  it("404 for an unknown conversation, 401 without a key, 404 for an unknown file", async () => {
    expectConforms("uploadFiles", await upload([["a.txt", "a"]], "00000000-0000-4000-8000-000000000000"), 404);
    const form = new FormData();
    form.append("files", new Blob(["a"]), "a.txt");
    expectConforms("uploadFiles", await t.call("POST", `/api/conversations/${id}/upload-files`, { body: form, key: null }), 401);
    expect((await t.call("GET", `/api/conversations/${id}/files/nothing.txt`)).status).toBe(404);
    expect((await t.call("GET", `/api/conversations/${id}/files/..%2F..%2Facs.sqlite`)).status).toBe(404);
  });

  it("no files field is a 422", async () => {
    const form = new FormData();
    form.append("file", new Blob(["a"]), "a.txt");
    expect422("uploadFiles", await t.call("POST", `/api/conversations/${id}/upload-files`, { body: form }), ["body", "files"]);
  });
});
