/**
 * Where the HTML report's body waits while the inputs are read: its summary comes first in the
 * document but is only known at the end. Small bodies stay in memory; past a bound, the body goes
 * to a temporary file, so that memory stays flat however long the recordings are.
 */
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { StringDecoder } from "node:string_decoder";
import type { Output } from "../output.js";

/** Text kept in memory before the body moves to a temporary file. */
const MEMORY_BYTES = 8 * 1024 * 1024;
const WRITE_CHUNK = 64 * 1024;
const READ_CHUNK = 1024 * 1024;

/** Text written now, read back once in order (into an {@link Output}), then thrown away. */
export class Spool {
  private chunks: string[] = [];
  private buffered = 0;
  private file: { directory: string; fd: number } | undefined;

  constructor(private readonly memoryBytes = MEMORY_BYTES) {}

  /** Whether the text went to a temporary file (tests check both paths). */
  get onDisk(): boolean {
    return this.file !== undefined;
  }

  write(text: string): void {
    this.chunks.push(text);
    this.buffered += text.length;
    if (this.file) {
      if (this.buffered >= WRITE_CHUNK) this.spill();
    } else if (this.buffered >= this.memoryBytes) {
      const directory = mkdtempSync(path.join(os.tmpdir(), "acs-validate-html-"));
      this.file = { directory, fd: openSync(path.join(directory, "body.html"), "w+") };
      // Removed at once where the system allows it (the descriptor keeps it readable), so that a
      // killed run leaves nothing behind; dispose() removes it elsewhere.
      try {
        rmSync(directory, { recursive: true, force: true });
      } catch {
        // Windows: the open file cannot be removed yet.
      }
      this.spill();
    }
  }

  /** Writes everything spooled into `output`, waiting whenever the output's buffer is full. */
  async copyTo(output: Output): Promise<void> {
    if (!this.file) {
      for (const chunk of this.chunks) {
        output.write(chunk);
        await output.drain();
      }
      this.chunks = [];
      this.buffered = 0;
      return;
    }
    this.spill();
    const decoder = new StringDecoder("utf8");
    const buffer = Buffer.alloc(READ_CHUNK);
    let position = 0;
    for (;;) {
      const read = readSync(this.file.fd, buffer, 0, buffer.length, position);
      if (read === 0) break;
      position += read;
      output.write(decoder.write(buffer.subarray(0, read)));
      await output.drain();
      if (output.broken) break;
    }
    output.write(decoder.end());
  }

  /** Closes and removes the temporary file, if there is one. */
  dispose(): void {
    if (!this.file) return;
    const { directory, fd } = this.file;
    this.file = undefined;
    closeSync(fd);
    rmSync(directory, { recursive: true, force: true });
  }

  private spill(): void {
    if (!this.file || this.chunks.length === 0) return;
    const bytes = Buffer.from(this.chunks.join(""), "utf8");
    // A write may take fewer bytes than it was given (a full disk, a signal): write the rest.
    for (let done = 0; done < bytes.length; ) done += writeSync(this.file.fd, bytes, done);
    this.chunks = [];
    this.buffered = 0;
  }
}
