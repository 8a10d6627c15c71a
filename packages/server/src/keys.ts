/** Session API keys: from SESSION_API_KEY, or generated once and kept in the data directory. */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";

export interface SessionKeys {
  keys: string[];
  /** Set when this start generated the key (the CLI prints it once). */
  generated?: string;
  source: "environment" | "file";
}

export function loadSessionKeys(dataDir: string, env: NodeJS.ProcessEnv = process.env): SessionKeys {
  const fromEnv = (env.SESSION_API_KEY ?? "").split(",").map((k) => k.trim()).filter(Boolean);
  if (fromEnv.length) return { keys: fromEnv, source: "environment" };
  const file = path.join(dataDir, "session-api-key");
  if (existsSync(file)) {
    if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
    const key = readFileSync(file, "utf8").trim();
    if (!key) throw new Error(`${file} is empty: delete it to generate a new key, or set SESSION_API_KEY`);
    return { keys: [key], source: "file" };
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32).toString("base64url");
  writeFileSync(file, key + "\n", { mode: 0o600, flag: "wx" });
  chmodSync(file, 0o600); // exactly, whatever the umask
  return { keys: [key], generated: key, source: "file" };
}

const digest = (value: string) => createHash("sha256").update(value).digest();

/**
 * A constant-time check of a presented key against every accepted key: digests make the lengths
 * equal, and every key is compared whatever the outcome.
 */
export function createKeyCheck(keys: readonly string[]): (presented: string | undefined) => boolean {
  const accepted = keys.map(digest);
  return (presented) => {
    const candidate = digest(presented ?? "");
    let match = false;
    for (const key of accepted) match = timingSafeEqual(key, candidate) || match;
    return presented !== undefined && presented !== "" && match;
  };
}
