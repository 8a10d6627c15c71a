import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../../src/config.js";
import { createCursorCodec } from "../../src/signed-cursors.js";
import { cursorCodec } from "../../src/core/cursor.js";
import { createKeyCheck, loadSessionKeys } from "../../src/keys.js";
import { openapiDocument } from "@acs-toolkit/schema/documents";
import { Ajv2020 } from "ajv/dist/2020.js";
import { RequestValidationError, RequestValidators } from "../../src/validation/request-validators.js";

describe("parseConfig", () => {
  it("has sane defaults", () => {
    const config = parseConfig([], {});
    expect(config).toMatchObject({ host: "127.0.0.1", port: 3000, publicRead: false, corsOrigins: [], jsonLimitBytes: 64 * 1024 * 1024, logLevel: "info" });
    expect(config).toMatchObject({ runtime: "record", allowHostExecution: false, agentNetwork: false, agentIdleSeconds: 1800 });
    expect(config.dataDir).toBe(path.resolve(".data"));
    expect(config.uploadLimits).toEqual({ maxFileBytes: 25 * 1024 * 1024, maxFiles: 100, maxRequestBytes: 250 * 1024 * 1024 });
  });

  it("reads the environment, and flags win", () => {
    const env = { ACS_PORT: "4000", ACS_DATA_DIR: "/tmp/x", ACS_PUBLIC_READ: "1", ACS_CORS_ORIGINS: "http://a.test, http://b.test", ACS_MAX_FILES: "3" };
    expect(parseConfig([], env)).toMatchObject({ port: 4000, dataDir: "/tmp/x", publicRead: true, corsOrigins: ["http://a.test", "http://b.test"], uploadLimits: { maxFiles: 3 } });
    expect(parseConfig(["--port", "5000", "--cors-origin", "*", "--data-dir", "/tmp/y"], env)).toMatchObject({ port: 5000, corsOrigins: ["*"], dataDir: "/tmp/y" });
  });

  it("selects the agent runtime and its safety flags by flag or environment", () => {
    const env = { ACS_RUNTIME: "agent", ACS_ALLOW_HOST_EXECUTION: "1", ACS_AGENT_NETWORK: "true" };
    expect(parseConfig([], env)).toMatchObject({ runtime: "agent", allowHostExecution: true, agentNetwork: true });
    expect(parseConfig(["--runtime", "record"], env)).toMatchObject({ runtime: "record" });
    expect(parseConfig(["--runtime", "agent", "--allow-host-execution", "--agent-network"], {})).toMatchObject({ runtime: "agent", allowHostExecution: true, agentNetwork: true });
  });

  it("reads the sandbox's user and limits by flag or environment, with defaults a real task never meets", () => {
    expect(parseConfig([], {})).toMatchObject({
      sandboxUser: { uid: 65534, gid: 65534 },
      sandboxLimits: { processes: 512, memoryBytes: 4 * 1024 ** 3, fileBytes: 1024 ** 3, cpuSeconds: 3600, tmpBytes: 4 * 1024 ** 3, shmBytes: 64 * 1024 ** 2 },
      sandboxCgroup: "auto",
    });
    const env = { ACS_SANDBOX_USER: "1500", ACS_SANDBOX_PROCESSES: "64", ACS_SANDBOX_CPU_SECONDS: "10", ACS_SANDBOX_TMP_BYTES: "2097152", ACS_SANDBOX_SHM_BYTES: "3145728", ACS_SANDBOX_CGROUP: "off" };
    expect(parseConfig([], env)).toMatchObject({ sandboxUser: { uid: 1500, gid: 1500 }, sandboxLimits: { processes: 64, cpuSeconds: 10, tmpBytes: 2097152, shmBytes: 3145728 }, sandboxCgroup: "off" });
    expect(
      parseConfig(["--sandbox-user", "1500:1600", "--sandbox-file-bytes", "1024", "--sandbox-memory-bytes", "1048576", "--sandbox-cgroup", "/sys/fs/cgroup/acs"], env),
    ).toMatchObject({
      sandboxUser: { uid: 1500, gid: 1600 },
      sandboxLimits: { processes: 64, fileBytes: 1024, memoryBytes: 1048576 },
      sandboxCgroup: "/sys/fs/cgroup/acs",
    });
  });

  it.each([
    [["--port", "abc"], /--port must be a whole number/],
    [["--port", "70000"], /--port must be at most 65535/],
    [["--max-files", "0"], /--max-files must be at least 1/],
    [["--log-level", "loud"], /--log-level must be one of/],
    [["--runtime", "agnet"], /--runtime must be record or agent, got "agnet"/],
    [["--agent-idle-seconds", "0"], /--agent-idle-seconds must be at least 1/],
    [["--sandbox-user", "0"], /--sandbox-user must not be root/],
    [["--sandbox-user", "1000:0"], /--sandbox-user must not be root/],
    [["--sandbox-user", "nobody"], /--sandbox-user must be UID or UID:GID \(numbers\), got "nobody"/],
    [["--sandbox-processes", "0"], /--sandbox-processes must be at least 1/],
    [["--sandbox-memory-bytes", "1000"], /--sandbox-memory-bytes must be at least 1048576/],
    [["--sandbox-cpu-seconds", "1.5"], /--sandbox-cpu-seconds must be a whole number/],
    [["--sandbox-tmp-bytes", "1000"], /--sandbox-tmp-bytes must be at least 1048576/],
    [["--sandbox-shm-bytes", "1000"], /--sandbox-shm-bytes must be at least 1048576/],
    [["--sandbox-cgroup", "acs"], /--sandbox-cgroup must be auto, off or an absolute cgroup v2 directory, got "acs"/],
    [["--what"], /^unknown option --what$/],
    [["--prot", "1"], /^unknown option --prot \(did you mean --port\?\)$/],
    // A body is decoded to one string: past Node's longest string the parser threw.
    [["--json-limit-bytes", String(2 ** 30)], /--json-limit-bytes must be at most 536870888 \(the longest text Node.js holds\)/],
  ])("refuses %j with a clear message", (argv, message) => {
    expect(() => parseConfig(argv, {})).toThrow(ConfigError);
    expect(() => parseConfig(argv, {})).toThrow(message);
  });
});

describe("session keys", () => {
  let dir: string;
  beforeEach(async () => void (dir = await mkdtemp(path.join(tmpdir(), "acs-keys-"))));
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it("SESSION_API_KEY holds a comma-separated list (rotation)", () => {
    expect(loadSessionKeys(dir, { SESSION_API_KEY: "old-key, new-key" })).toEqual({ keys: ["old-key", "new-key"], source: "environment" });
  });

  it("without one, a key is generated once into a 0600 file and reused", async () => {
    const first = loadSessionKeys(dir, {});
    expect(first.generated).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const file = path.join(dir, "session-api-key");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const second = loadSessionKeys(dir, {});
    expect(second).toEqual({ keys: [first.generated], source: "file" });
  });

  it("an empty key file is refused", async () => {
    await writeFile(path.join(dir, "session-api-key"), "\n", { mode: 0o600 });
    expect(() => loadSessionKeys(dir, {})).toThrow(/is empty/);
  });

  it("a key file readable by others is tightened to 0600", async () => {
    await writeFile(path.join(dir, "session-api-key"), "k\n", { mode: 0o644 });
    loadSessionKeys(dir, {});
    expect((await stat(path.join(dir, "session-api-key"))).mode & 0o777).toBe(0o600);
    expect((await readFile(path.join(dir, "session-api-key"), "utf8")).trim()).toBe("k");
  });

  it("the check accepts every configured key and nothing else", () => {
    const check = createKeyCheck(["alpha", "beta"]);
    expect([check("alpha"), check("beta"), check("gamma"), check(""), check(undefined), check("alph")]).toEqual([true, true, false, false, false, false]);
    expect(createKeyCheck([])("anything")).toBe(false);
  });
});

describe("page cursors", () => {
  const codec = createCursorCodec(Buffer.alloc(32, 7));
  const scope = { conversationId: "c1", order: "asc" as const };

  it("round-trip a position", () => {
    expect(codec.decode(scope, codec.encode(scope, { ts: 1770290687142819, seq: 42 }))).toEqual({ ok: true, position: { ts: 1770290687142819, seq: 42 } });
  });

  it.each([
    ["another conversation", () => codec.decode({ ...scope, conversationId: "c2" }, codec.encode(scope, { ts: 1, seq: 1 })), "belongs to another conversation"],
    ["another order", () => codec.decode({ ...scope, order: "desc" }, codec.encode(scope, { ts: 1, seq: 1 })), "was issued for sort_order TIMESTAMP"],
    ["another server's secret", () => createCursorCodec(Buffer.alloc(32, 8)).decode(scope, codec.encode(scope, { ts: 1, seq: 1 })), "is not a page cursor issued by this server"],
    ["a tampered payload", () => codec.decode(scope, "x" + codec.encode(scope, { ts: 1, seq: 1 })), "is not a page cursor issued by this server"],
    ["an event id", () => codec.decode(scope, "974caa29-4f4b-4c30-b4e1-5169f41e6d3d"), "is not a page cursor issued by this server"],
    ["a huge string", () => codec.decode(scope, "a".repeat(10_000) + "." + "b"), "is not a page cursor issued by this server"],
  ])("refuse %s", (_name, decode, reason) => {
    expect(decode()).toEqual({ ok: false, reason });
  });

  it("are signed once for a position issued again (the same cursor), and apart per scope and position", () => {
    const signed: string[] = [];
    const signing = cursorCodec({ sign: (payload) => (signed.push(payload), `s${signed.length}`), verify: () => true });
    const first = signing.encode(scope, { ts: 5, seq: 2 });
    expect(signing.encode(scope, { ts: 5, seq: 2 })).toBe(first);
    expect(signed).toHaveLength(1);
    const others = [signing.encode(scope, { ts: 5, seq: 3 }), signing.encode(scope, { ts: 6, seq: 2 }), signing.encode({ ...scope, order: "desc" }, { ts: 5, seq: 2 }), signing.encode({ ...scope, conversationId: "c2" }, { ts: 5, seq: 2 })];
    expect(new Set([first, ...others]).size).toBe(5);
    expect(signed).toHaveLength(5);
    for (const [cursor, position] of [[first, { ts: 5, seq: 2 }], [others[0]!, { ts: 5, seq: 3 }]] as const) expect(signing.decode(scope, cursor)).toEqual({ ok: true, position });
  });
});

describe("RequestValidators", () => {
  it("compiles schemas that are valid JSON Schema 2020-12 (AJV does not check them against the meta-schema at start)", () => {
    const ajv = new Ajv2020({ strict: false });
    const schemas: Array<[string, unknown]> = Object.entries((openapiDocument.components as { schemas: Record<string, unknown> }).schemas);
    for (const [path, item] of Object.entries(openapiDocument.paths as Record<string, Record<string, { parameters?: Array<{ name: string; schema?: unknown }>; requestBody?: { content?: Record<string, { schema?: unknown }> } }>>)) {
      for (const [method, op] of Object.entries(item)) {
        for (const parameter of op.parameters ?? []) if (parameter.schema) schemas.push([`${method} ${path} ${parameter.name}`, parameter.schema]);
        for (const [type, content] of Object.entries(op.requestBody?.content ?? {})) if (content.schema) schemas.push([`${method} ${path} ${type}`, content.schema]);
      }
    }
    expect(schemas.length).toBeGreaterThan(100);
    for (const [name, schema] of schemas) expect(ajv.validateSchema(schema as object), `${name}: ${ajv.errorsText()}`).toBe(true);
    expect(ajv.validateSchema({ type: "object", properties: { limit: { type: "integr" } } })).toBe(false);
  });

  it("compiles every operation's parameter and body validators (they compile on first use)", () => {
    const validators = new RequestValidators(openapiDocument);
    const operations = Object.values(openapiDocument.paths as Record<string, Record<string, { operationId?: string }>>)
      .flatMap((item) => Object.values(item))
      .map((op) => op.operationId)
      .filter((id): id is string => Boolean(id));
    expect(operations.length).toBeGreaterThanOrEqual(13);
    for (const id of operations) {
      for (const run of [() => validators.parameters(id, {}, {}), () => validators.body(id, {})]) {
        try {
          run();
        } catch (error) {
          expect(error, id).toBeInstanceOf(RequestValidationError);
        }
      }
    }
  });
});
