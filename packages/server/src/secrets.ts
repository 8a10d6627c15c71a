/**
 * Encryption at rest of the account's secrets (LLM and search keys, git-provider tokens, custom
 * secrets, MCP api keys): AES-256-GCM with a random 96-bit IV per value and a 128-bit tag.
 *
 * Key source, in order:
 * 1. `ACS_SECRET_KEY` in the environment: 64 hexadecimal characters, or the base64 (standard or
 *    url-safe alphabet, padding optional) of exactly 32 bytes. An empty or blank value counts as
 *    unset. Any other value is refused with an error that says what is wrong without echoing it.
 * 2. `<dataDir>/secret.key`: exactly 32 raw bytes. Created at first use from `randomBytes(32)`
 *    with mode 0600 (and `dataDir` created with mode 0700 when missing). Creation is atomic (a
 *    temporary file linked into place), so two processes starting together agree on one key. A
 *    file of another size is refused, never replaced: replacing it would make every stored secret
 *    undecipherable. A key file readable or writable by group or others is tightened to 0600 and a
 *    warning is emitted; if it cannot be tightened (not the owner, read-only mount) a warning is
 *    emitted and the key is still used. Mode checks are skipped on Windows.
 *
 * Losing the key loses the stored secrets (they must be entered again); nothing else is affected.
 *
 * Sealed format: `v1:<base64url IV (12 bytes)>:<base64url ciphertext || tag (16 bytes)>`. The
 * version label is also bound as additional authenticated data, so a value cannot be replayed
 * under another format version. Errors never contain a plaintext, a sealed value or the key.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import {
  chmodSync,
  closeSync,
  fchmodSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";

/** Environment variable that carries the key. */
export const SECRET_KEY_ENV = "ACS_SECRET_KEY";
/** Name of the key file inside the data directory. */
export const SECRET_KEY_FILE = "secret.key";
/** Key length in bytes (AES-256). */
const SECRET_KEY_BYTES = 32;

const ALGORITHM = "aes-256-gcm";
const IV_BYTES = 12;
const TAG_BYTES = 16;
const SEALED_VERSION = "v1";
const AAD = Buffer.from(`acs-secret:${SEALED_VERSION}`, "utf8");
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const SEALED_SHAPE = /^v1:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]{22,}$/;

/** The key is missing, malformed, or its file is unusable. The message never contains key material. */
export class SecretKeyError extends Error {
  override readonly name = "SecretKeyError";
}

/** A sealed value is malformed, tampered with, or sealed with another key. The message never contains a secret. */
export class SecretDecryptionError extends Error {
  override readonly name = "SecretDecryptionError";
}

interface LoadSecretKeyOptions {
  /** Directory of the key file (created with mode 0700 when missing and the key comes from the file). */
  dataDir: string;
  /** Environment to read `ACS_SECRET_KEY` from; `process.env` when omitted. */
  env?: NodeJS.ProcessEnv;
  /** Receives warnings (key file mode tightened or too open); `process.emitWarning` when omitted. */
  onWarning?: (message: string) => void;
}

/** Returns the 32-byte key from the environment or from `<dataDir>/secret.key` (see the module comment). */
export function loadSecretKey(options: LoadSecretKeyOptions): Buffer {
  const env = options.env ?? process.env;
  const fromEnv = env[SECRET_KEY_ENV];
  if (fromEnv !== undefined && fromEnv.trim() !== "") return parseKeyText(fromEnv.trim());
  const warn = options.onWarning ?? ((message: string) => process.emitWarning(message, { code: "ACS_SECRET_KEY" }));
  return loadOrCreateKeyFile(options.dataDir, warn);
}

function parseKeyText(text: string): Buffer {
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, "hex");
  if (/^[A-Za-z0-9+/]{43}=?$/.test(text) || /^[A-Za-z0-9_-]{43}=?$/.test(text)) {
    const key = Buffer.from(text, "base64");
    if (key.length === SECRET_KEY_BYTES) return key;
  }
  throw new SecretKeyError(
    `${SECRET_KEY_ENV} is not a valid key: expected 64 hexadecimal characters or the base64 encoding of ` +
      `exactly ${SECRET_KEY_BYTES} bytes (the value given has ${text.length} characters; it is not shown)`,
  );
}

function errorCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined;
}

function loadOrCreateKeyFile(dataDir: string, warn: (message: string) => void): Buffer {
  const file = join(dataDir, SECRET_KEY_FILE);
  const existing = readKeyFile(file, warn);
  if (existing) return existing;
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const created = createKeyFile(file);
  if (created) return created;
  // Another process created it between our read and our link: use theirs.
  const raced = readKeyFile(file, warn);
  if (raced) return raced;
  throw new SecretKeyError(`the key file ${file} vanished while it was being created`);
}

/** The key in `file`, or undefined when the file does not exist. */
function readKeyFile(file: string, warn: (message: string) => void): Buffer | undefined {
  let stat;
  try {
    stat = statSync(file);
  } catch (error) {
    if (errorCode(error) === "ENOENT") return undefined;
    throw new SecretKeyError(`cannot read the key file ${file} (${errorCode(error) ?? "unknown error"})`);
  }
  if (!stat.isFile()) throw new SecretKeyError(`the key file ${file} is not a regular file`);
  if (process.platform !== "win32" && (stat.mode & 0o077) !== 0) {
    const was = (stat.mode & 0o777).toString(8).padStart(4, "0");
    try {
      chmodSync(file, 0o600);
      warn(`the key file ${file} was accessible to group or others (mode ${was}); its mode is now 0600`);
    } catch (error) {
      warn(
        `the key file ${file} is accessible to group or others (mode ${was}) and could not be set to 0600 ` +
          `(${errorCode(error) ?? "unknown error"}); restrict it, or pass the key in ${SECRET_KEY_ENV}`,
      );
    }
  }
  let key: Buffer;
  try {
    key = readFileSync(file);
  } catch (error) {
    throw new SecretKeyError(`cannot read the key file ${file} (${errorCode(error) ?? "unknown error"})`);
  }
  if (key.length !== SECRET_KEY_BYTES) {
    key.fill(0);
    throw new SecretKeyError(
      `the key file ${file} holds ${key.length} bytes; a key file holds exactly ${SECRET_KEY_BYTES} raw bytes. ` +
        `It is not replaced automatically, because the secrets stored with it would become unreadable`,
    );
  }
  return key;
}

/** Creates `file` atomically with a new key; undefined when another process created it first. */
function createKeyFile(file: string): Buffer | undefined {
  const key = randomBytes(SECRET_KEY_BYTES);
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  writeKey(temporary, key);
  try {
    linkSync(temporary, file);
    return key;
  } catch (error) {
    const code = errorCode(error);
    if (code === "EEXIST") return undefined;
    if (code === "EPERM" || code === "ENOTSUP" || code === "ENOSYS" || code === "EXDEV") {
      // Filesystems without hard links: exclusive create (not atomic against a concurrent reader).
      try {
        writeKey(file, key);
        return key;
      } catch (fallbackError) {
        if (errorCode(fallbackError) === "EEXIST") return undefined;
        throw fallbackError;
      }
    }
    throw error;
  } finally {
    rmSync(temporary, { force: true });
  }
}

function writeKey(path: string, key: Buffer): void {
  const fd = openSync(path, "wx", 0o600);
  try {
    if (process.platform !== "win32") fchmodSync(fd, 0o600); // whatever the umask
    writeSync(fd, key);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Seals and opens secret strings with one key. */
export interface SecretCipher {
  /** A new sealed string (random IV: sealing the same plaintext twice gives different strings). */
  encrypt(plaintext: string): string;
  /** The plaintext of a sealed string. @throws SecretDecryptionError when malformed, tampered or foreign */
  decrypt(sealed: string): string;
}

/** True when `value` has the shape of a sealed string (says nothing of whether it opens). */
export function isSealed(value: unknown): value is string {
  return typeof value === "string" && SEALED_SHAPE.test(value);
}

export function createCipher(key: Buffer): SecretCipher {
  if (!Buffer.isBuffer(key) || key.length !== SECRET_KEY_BYTES) {
    throw new SecretKeyError(`an AES-256-GCM key is exactly ${SECRET_KEY_BYTES} bytes`);
  }
  const secretKey = Buffer.from(key); // a private copy: later changes to the caller's buffer do not matter

  return {
    encrypt(plaintext: string): string {
      if (typeof plaintext !== "string") throw new TypeError("only strings can be sealed");
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv(ALGORITHM, secretKey, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(AAD);
      const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()]);
      return `${SEALED_VERSION}:${iv.toString("base64url")}:${body.toString("base64url")}`;
    },

    decrypt(sealed: string): string {
      if (typeof sealed !== "string") throw new SecretDecryptionError("a sealed secret is a string");
      const parts = sealed.split(":");
      if (parts.length !== 3 || parts[0] !== SEALED_VERSION) {
        throw new SecretDecryptionError(`not a sealed secret of format ${SEALED_VERSION}`);
      }
      const [, ivText = "", bodyText = ""] = parts;
      if (!BASE64URL.test(ivText) || !BASE64URL.test(bodyText)) {
        throw new SecretDecryptionError("malformed sealed secret (not base64url)");
      }
      const iv = Buffer.from(ivText, "base64url");
      const body = Buffer.from(bodyText, "base64url");
      // Canonical encodings only: a re-encoding must give back the text exactly.
      if (iv.length !== IV_BYTES || iv.toString("base64url") !== ivText) {
        throw new SecretDecryptionError("malformed sealed secret (bad IV)");
      }
      if (body.length < TAG_BYTES || body.toString("base64url") !== bodyText) {
        throw new SecretDecryptionError("malformed sealed secret (bad ciphertext)");
      }
      const decipher = createDecipheriv(ALGORITHM, secretKey, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(AAD);
      decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
      try {
        return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]).toString(
          "utf8",
        );
      } catch {
        throw new SecretDecryptionError("sealed secret failed authentication (tampered with, or sealed with another key)");
      }
    },
  };
}
