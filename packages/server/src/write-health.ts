/**
 * Whether writes work: a full disk (ENOSPC, EDQUOT, SQLITE_FULL) is answered 507 and remembered
 * here, so that /health reports it; it is forgotten when a later write succeeds or when /health's
 * probe (a small file written to the data directory and removed) succeeds, so that writes resume
 * without a restart once space is freed.
 */
import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";

export { storageFullCause } from "./api/errors.js";

export interface WriteFailure {
  cause: string;
  /** ISO-8601 time of the first failure. */
  since: string;
}

const PROBE_BYTES = 64 * 1024;

export class WriteHealth {
  private failure: WriteFailure | undefined;

  /** @param dataDir where the probe file is written */
  constructor(private readonly dataDir: string) {}

  /** A write failed for lack of space. */
  failed(cause: string): void {
    this.failure ??= { cause, since: new Date().toISOString() };
  }

  /** A write succeeded. */
  succeeded(): void {
    this.failure = undefined;
  }

  /** The current failure; while there is one, each call probes whether space is back (a failed write of 64 KiB is cheap). */
  check(): WriteFailure | undefined {
    if (this.failure) {
      const probe = path.join(this.dataDir, ".acs-write-probe");
      try {
        writeFileSync(probe, Buffer.alloc(PROBE_BYTES), { mode: 0o600 });
        this.failure = undefined;
      } catch {
        // Still full.
      } finally {
        rmSync(probe, { force: true });
      }
    }
    return this.failure;
  }
}
