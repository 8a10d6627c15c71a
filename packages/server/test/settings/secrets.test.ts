import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  SECRET_KEY_ENV,
  SECRET_KEY_FILE,
  SecretDecryptionError,
  SecretKeyError,
  createCipher,
  isSealed,
  loadSecretKey,
} from "../../src/secrets.js";

const posix = process.platform !== "win32";
const mode = (path: string) => statSync(path).mode & 0o777;

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "acs-secrets-"));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

describe("loadSecretKey from ACS_SECRET_KEY", () => {
  const key = randomBytes(32);

  it.each([
    ["lower-case hex", key.toString("hex")],
    ["upper-case hex", key.toString("hex").toUpperCase()],
    ["base64", key.toString("base64")],
    ["base64 without padding", key.toString("base64").replace(/=+$/, "")],
    ["base64url", key.toString("base64url")],
    ["hex with surrounding whitespace", `  ${key.toString("hex")}\n`],
  ])("accepts %s", (_name, value) => {
    const dataDir = join(root, "data");
    expect(loadSecretKey({ dataDir, env: { [SECRET_KEY_ENV]: value } }).equals(key)).toBe(true);
    // The environment wins: no key file (nor data directory) is created.
    expect(existsSync(dataDir)).toBe(false);
  });

  it.each([
    ["too short", "abc123"],
    ["63 hex characters", key.toString("hex").slice(1)],
    ["65 hex characters", `${key.toString("hex")}0`],
    ["64 characters that are not hex", "g".repeat(64)],
    ["hex with a space inside", `${key.toString("hex").slice(0, 32)} ${key.toString("hex").slice(32)}`],
    ["base64 of 16 bytes", randomBytes(16).toString("base64")],
    ["base64 of 33 bytes", randomBytes(33).toString("base64")],
    ["base64 of 48 bytes", randomBytes(48).toString("base64")],
    ["a passphrase", "correct horse battery staple, but longer than it should be"],
  ])("refuses %s without echoing it", (_name, value) => {
    let error: unknown;
    try {
      loadSecretKey({ dataDir: join(root, "data"), env: { [SECRET_KEY_ENV]: value } });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(SecretKeyError);
    const message = (error as Error).message;
    expect(message).toContain(SECRET_KEY_ENV);
    expect(message).toMatch(/64 hexadecimal characters or the base64 encoding of exactly 32 bytes/);
    expect(message).not.toContain(value.trim());
    expect(existsSync(join(root, "data"))).toBe(false);
  });

  it("treats an empty or blank value as unset (falls back to the key file)", () => {
    const dataDir = join(root, "data");
    const first = loadSecretKey({ dataDir, env: { [SECRET_KEY_ENV]: "" } });
    const second = loadSecretKey({ dataDir, env: { [SECRET_KEY_ENV]: "   " } });
    expect(first.equals(second)).toBe(true);
    expect(readFileSync(join(dataDir, SECRET_KEY_FILE)).equals(first)).toBe(true);
  });
});

describe("loadSecretKey from <dataDir>/secret.key", () => {
  it("creates the data directory (0700) and a 32-byte key file (0600), then reuses it", () => {
    const dataDir = join(root, "nested", "data");
    const warnings: string[] = [];
    const first = loadSecretKey({ dataDir, env: {}, onWarning: (m) => warnings.push(m) });
    expect(first).toHaveLength(32);
    const file = join(dataDir, SECRET_KEY_FILE);
    expect(readFileSync(file).equals(first)).toBe(true);
    if (posix) {
      expect(mode(file)).toBe(0o600);
      expect(mode(dataDir)).toBe(0o700);
    }
    const second = loadSecretKey({ dataDir, env: {}, onWarning: (m) => warnings.push(m) });
    expect(second.equals(first)).toBe(true);
    expect(warnings).toEqual([]);
    // No temporary file is left behind.
    expect(readdirSync(dataDir)).toEqual([SECRET_KEY_FILE]);
  });

  it("gives different keys to different data directories", () => {
    const a = loadSecretKey({ dataDir: join(root, "a"), env: {} });
    const b = loadSecretKey({ dataDir: join(root, "b"), env: {} });
    expect(a.equals(b)).toBe(false);
  });

  it("uses an existing data directory as is", () => {
    const dataDir = join(root, "existing");
    mkdirSync(dataDir, { mode: 0o755 });
    chmodSync(dataDir, 0o755);
    loadSecretKey({ dataDir, env: {} });
    if (posix) expect(mode(dataDir)).toBe(0o755);
  });

  it.each([
    ["empty", Buffer.alloc(0)],
    ["16 bytes", randomBytes(16)],
    ["33 bytes", randomBytes(33)],
    ["a hex text of 32 bytes", Buffer.from(`${randomBytes(32).toString("hex")}\n`)],
  ])("refuses a key file that is %s and leaves it untouched", (_name, content) => {
    const dataDir = join(root, "data");
    mkdirSync(dataDir);
    const file = join(dataDir, SECRET_KEY_FILE);
    writeFileSync(file, content, { mode: 0o600 });
    expect(() => loadSecretKey({ dataDir, env: {} })).toThrow(SecretKeyError);
    expect(() => loadSecretKey({ dataDir, env: {} })).toThrow(/exactly 32 raw bytes/);
    expect(readFileSync(file).equals(content)).toBe(true);
  });

  it("refuses a key path that is not a regular file", () => {
    const dataDir = join(root, "data");
    mkdirSync(join(dataDir, SECRET_KEY_FILE), { recursive: true });
    expect(() => loadSecretKey({ dataDir, env: {} })).toThrow(/not a regular file/);
  });

  it.skipIf(!posix)("tightens a key file readable by group or others to 0600 and warns", () => {
    const dataDir = join(root, "data");
    mkdirSync(dataDir);
    const file = join(dataDir, SECRET_KEY_FILE);
    const key = randomBytes(32);
    writeFileSync(file, key);
    chmodSync(file, 0o644);
    const warnings: string[] = [];
    expect(loadSecretKey({ dataDir, env: {}, onWarning: (m) => warnings.push(m) }).equals(key)).toBe(true);
    expect(mode(file)).toBe(0o600);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/mode 0644.*now 0600/);
    expect(warnings[0]).not.toContain(key.toString("hex"));
  });
});

describe("createCipher", () => {
  const key = randomBytes(32);
  const cipher = createCipher(key);

  it.each([
    ["an API key", "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"],
    ["the empty string", ""],
    ["non-ASCII text", "clé secrète 🔑 秘密"],
    ["a long value", "x".repeat(100_000)],
    ["text with colons", "a:b:c"],
  ])("round-trips %s", (_name, plaintext) => {
    const sealed = cipher.encrypt(plaintext);
    expect(sealed).toMatch(/^v1:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]{22,}$/);
    expect(isSealed(sealed)).toBe(true);
    if (plaintext.length > 3) expect(sealed).not.toContain(plaintext);
    expect(cipher.decrypt(sealed)).toBe(plaintext);
  });

  it("uses a fresh random IV for every call", () => {
    const sealed = Array.from({ length: 500 }, () => cipher.encrypt("same plaintext"));
    expect(new Set(sealed).size).toBe(sealed.length);
    expect(new Set(sealed.map((s) => s.split(":")[1])).size).toBe(sealed.length);
  });

  it("opens values sealed by another cipher with the same key", () => {
    expect(createCipher(Buffer.from(key)).decrypt(cipher.encrypt("shared"))).toBe("shared");
  });

  it("keeps a private copy of the key", () => {
    const mutable = Buffer.from(key);
    const own = createCipher(mutable);
    const sealed = own.encrypt("value");
    mutable.fill(0);
    expect(own.decrypt(sealed)).toBe("value");
  });

  it("refuses a key that is not 32 bytes", () => {
    expect(() => createCipher(randomBytes(16))).toThrow(SecretKeyError);
    expect(() => createCipher(randomBytes(33))).toThrow(SecretKeyError);
  });

  const plaintext = "ghp_TopSecretTokenValue1234567890";
  const sealed = cipher.encrypt(plaintext);
  const [, ivText = "", bodyText = ""] = sealed.split(":");
  const flip = (text: string, index: number) => {
    const bytes = Buffer.from(text, "base64url");
    bytes[index] = (bytes[index] ?? 0) ^ 0x01;
    return bytes.toString("base64url");
  };
  const body = Buffer.from(bodyText, "base64url");

  it.each([
    ["a flipped IV bit", `v1:${flip(ivText, 0)}:${bodyText}`],
    ["a flipped ciphertext bit", `v1:${ivText}:${flip(bodyText, 0)}`],
    ["a flipped tag bit", `v1:${ivText}:${flip(bodyText, body.length - 1)}`],
    ["a truncated tag", `v1:${ivText}:${body.subarray(0, body.length - 1).toString("base64url")}`],
    ["the tag only", `v1:${ivText}:${body.subarray(body.length - 16).toString("base64url")}`],
    ["a body shorter than a tag", `v1:${ivText}:${body.subarray(0, 8).toString("base64url")}`],
    ["another version", `v2:${ivText}:${bodyText}`],
    ["no version", `${ivText}:${bodyText}`],
    ["an extra part", `${sealed}:AAAA`],
    ["a short IV", `v1:${ivText.slice(0, 12)}:${bodyText}`],
    ["standard base64 characters", `v1:${ivText}:${bodyText.replace(/-/g, "+").replace(/_/g, "/")}+/`],
    ["padding", `${sealed}=`],
    ["the empty string", ""],
    ["the plaintext itself", plaintext],
  ])("detects %s", (_name, tampered) => {
    let error: unknown;
    try {
      cipher.decrypt(tampered);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(SecretDecryptionError);
    const message = (error as Error).message;
    expect(message).not.toContain(plaintext);
    expect(message).not.toContain(key.toString("hex"));
    expect(message).not.toContain(key.toString("base64"));
    expect(message).not.toContain(bodyText);
  });

  it("refuses a value sealed with another key", () => {
    const other = createCipher(randomBytes(32));
    expect(() => other.decrypt(sealed)).toThrow(SecretDecryptionError);
    expect(() => other.decrypt(sealed)).toThrow(/another key/);
  });

  it("refuses non-string input at run time", () => {
    expect(() => cipher.encrypt(42 as unknown as string)).toThrow(TypeError);
    expect(() => cipher.decrypt(null as unknown as string)).toThrow(SecretDecryptionError);
  });

  it("isSealed recognises only the sealed shape", () => {
    expect(isSealed(sealed)).toBe(true);
    expect(isSealed(plaintext)).toBe(false);
    expect(isSealed("v1:short:short")).toBe(false);
    expect(isSealed(null)).toBe(false);
  });
});
