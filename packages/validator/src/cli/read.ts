/**
 * Reads events out of an input, recognising its shape by content: JSONL (one event a line), a JSON
 * array, an EventPage, one event, gzip-compressed versions of these, and the per-event files of a
 * reference event directory. Everything streams: JSONL line by line from 256 KiB reads, arrays and
 * pages element by element (json-scanner.ts); memory does not grow with the input.
 */
import { readFile } from "node:fs/promises";
import { Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { createGunzip } from "node:zlib";
import { validateEventPage } from "../index.js";
import type { EventFile } from "./inputs.js";
import { fragmentAt, type Fragment } from "./model.js";
import { describeSize, JsonDocumentScanner, type ScannedValue } from "./json-scanner.js";

/** One event as read, before validation, with what is needed to point into its text. */
export interface Entry {
  /** The parsed event; undefined when its text is not JSON. */
  value: unknown;
  /** Why the text is not JSON. */
  parseError?: string;
  /** 0-based offset in `text` where JSON.parse gave up, when it says. */
  parseOffset?: number;
  /** The text holding the event: its line (JSONL), its element (array, page) or its file. */
  text: string;
  /** 1-based line and column where `text` starts in the file. */
  line: number;
  column: number;
  /** JSON pointer of the event in its document: "" (a line, a file), "/3" (array), "/items/3" (page). */
  pointer: string;
  /** JSON pointer of the event inside `text`. */
  textPointer: string;
  /** A lone object (a JSONL line or a whole document), not an element of an array, page or directory. */
  bare: boolean;
  /** The file shown for this event, when not the input's own path (an event directory's file). */
  file?: string;
  /** False when the event's line does not count lines (the files of an event directory). */
  hasLine: boolean;
}

/** A finding about the input rather than about one event (structure, page fields, directory layout). */
export interface SourceIssue {
  severity: "error" | "warning";
  rule: string;
  message: string;
  pointer?: string;
  file?: string;
  line?: number;
  column?: number;
  /** Text to point into (and show) with `textPointer`, starting at `line`/`column`. */
  text?: string;
  textPointer?: string;
  /** Reading failed: the exit code is 2. */
  fatal?: boolean;
  /** What to show, when there is no `text` to point into. */
  fragment?: Fragment;
}

export interface ReadContext {
  /** Bytes read from the input (for progress). */
  onBytes(count: number): void;
  issue(issue: SourceIssue): void;
  /** Called between chunks: lets the output drain. */
  breathe(): Promise<void> | void;
  /** True once reading must stop (--max-errors reached). */
  stopped(): boolean;
}

/**
 * Receives each event; answers false to stop reading. The entry may be reused for the next event
 * (no allocation per line): a sink that keeps it must copy it.
 */
type Sink = (entry: Entry) => boolean;

/** The input is not a recording at all (exit code 2). */
export class InputError extends Error {
  constructor(
    readonly rule: string,
    message: string,
  ) {
    super(message);
  }
}

export type Format = "jsonl" | "array" | "page" | "event" | "directory";

export interface ReadLimits {
  /** The longest JSONL line read (bytes); a longer one is reported and skipped. */
  maxLineBytes: number;
  /** The largest array element, page member or single-object document (characters). */
  maxValueChars: number;
  /** How far to look for the end of the first line when telling JSONL from a JSON document. */
  peekBytes: number;
}

export const DEFAULT_LIMITS: ReadLimits = { maxLineBytes: 256 * 1024 * 1024, maxValueChars: 256 * 1024 * 1024, peekBytes: 64 * 1024 * 1024 };

/** Chunks of an input, with chunks put back after a peek. */
class Chunks {
  private readonly pending: Buffer[] = [];
  private readonly iterator: AsyncIterator<unknown>;

  constructor(
    source: AsyncIterable<unknown>,
    private readonly onBytes?: (count: number) => void,
  ) {
    this.iterator = source[Symbol.asyncIterator]();
  }

  async next(): Promise<Buffer | undefined> {
    if (this.pending.length > 0) return this.pending.shift();
    const result = await this.iterator.next();
    if (result.done) return undefined;
    const chunk = typeof result.value === "string" ? Buffer.from(result.value) : (result.value as Buffer);
    this.onBytes?.(chunk.length);
    return chunk;
  }

  unshift(chunks: Buffer[]): void {
    this.pending.unshift(...chunks);
  }

  /** Stops the underlying stream (reading ended early). */
  async close(): Promise<void> {
    await this.iterator.return?.();
  }
}

/** Reads a byte stream (a file, standard input): recognises the shape, then streams the events. */
export async function readStream(source: AsyncIterable<unknown>, context: ReadContext, sink: Sink, limits: ReadLimits = DEFAULT_LIMITS): Promise<Format> {
  const chunks = new Chunks(source, (count) => context.onBytes(count));
  try {
    return await readChunks(chunks, context, sink, limits, false);
  } finally {
    await chunks.close();
  }
}

async function readChunks(chunks: Chunks, context: ReadContext, sink: Sink, limits: ReadLimits, gunzipped: boolean): Promise<Format> {
  // Read until the first byte that is not whitespace.
  const head: Buffer[] = [];
  let first = -1;
  let firstChunk = 0;
  for (;;) {
    const chunk = await chunks.next();
    if (!chunk) break;
    head.push(chunk);
    const start = head.length === 1 && hasUtf8Bom(chunk) ? 3 : 0;
    first = firstNonWhitespace(chunk, start);
    if (first >= 0) {
      firstChunk = head.length - 1;
      break;
    }
  }
  if (first < 0) throw new InputError("input/empty", head.some((c) => c.length > 0) ? "holds only whitespace: there is no event to validate" : "is empty: there is no event to validate");

  const opening = head[0]!;
  if (!gunzipped && opening.length >= 2 && opening[0] === 0x1f && opening[1] === 0x8b) {
    chunks.unshift(head);
    const gunzip = Readable.from(replay(chunks)).pipe(createGunzip());
    const inner = new Chunks(gunzip);
    try {
      return await readChunks(inner, context, sink, limits, true);
    } catch (error) {
      if (error instanceof InputError) throw error;
      throw new InputError("input/unreadable", `is not a readable gzip file: ${(error as Error).message}`);
    } finally {
      await inner.close();
      gunzip.destroy();
    }
  }
  const sample = opening.subarray(0, 64 * 1024);
  if ((sample[0] === 0xff && sample[1] === 0xfe) || (sample[0] === 0xfe && sample[1] === 0xff)) {
    throw new InputError("input/binary", "is UTF-16 text: events are read as UTF-8 (convert the file first)");
  }
  if (sample.includes(0)) throw new InputError("input/binary", "is a binary file, not JSON");
  const byte = head[firstChunk]![first]!;
  if (byte !== 0x5b && byte !== 0x7b) {
    const text = Buffer.concat(head).subarray(0, 4096);
    if (countControlBytes(text) > 0) throw new InputError("input/binary", "is a binary file, not JSON");
    const start = text.toString("utf8").replace(/^\uFEFF/, "").trimStart();
    throw new InputError("input/not-json", `is not JSON: it starts with ${JSON.stringify(start.slice(0, 24))}; expected an event, an array or page of events, or JSONL`);
  }
  if (byte === 0x5b) {
    chunks.unshift(head);
    return readDocument(chunks, context, sink, limits);
  }
  const jsonl = await looksLikeJsonl(chunks, head, limits.peekBytes);
  chunks.unshift(head);
  if (jsonl) return readJsonl(chunks, context, sink, limits);
  return readDocument(chunks, context, sink, limits);
}

async function* replay(chunks: Chunks): AsyncGenerator<Buffer> {
  for (let chunk = await chunks.next(); chunk; chunk = await chunks.next()) yield chunk;
}

/**
 * A text starting with "{" is JSONL when its first line (or, if that one is broken, its second)
 * is a whole JSON object; otherwise it is one JSON document spread over lines (an indented event
 * or page). Reads ahead into `head` as far as needed, at most `peekBytes`.
 */
async function looksLikeJsonl(chunks: Chunks, head: Buffer[], peekBytes: number): Promise<boolean> {
  // Read on until two complete non-blank lines, the end of the input, or the peek limit; the
  // bytes are scanned once (newline bytes never occur inside a UTF-8 character).
  let size = 0;
  let complete = 0;
  let blank = true;
  let ended = false;
  const scan = (chunk: Buffer) => {
    for (let i = 0; i < chunk.length && complete < 2; i++) {
      const b = chunk[i]!;
      if (b === 0x0a) {
        if (!blank) complete++;
        blank = true;
      } else if (!isWhitespace(b)) blank = false;
    }
    size += chunk.length;
  };
  head.forEach(scan);
  while (complete < 2 && size < peekBytes) {
    const chunk = await chunks.next();
    if (!chunk) {
      ended = true;
      break;
    }
    head.push(chunk);
    scan(chunk);
  }
  const lines = Buffer.concat(head).toString("utf8").replace(/^\uFEFF/, "").split("\n");
  const candidates = lines.filter((line, i) => line.trim() !== "" && (ended || i < lines.length - 1)).slice(0, 2);
  for (const candidate of candidates) {
    try {
      const value = JSON.parse(candidate) as unknown;
      if (typeof value === "object" && value !== null && !Array.isArray(value)) return true;
    } catch {
      // Not a whole line of JSON: try the next one.
    }
  }
  return false;
}

const isWhitespace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function firstNonWhitespace(chunk: Buffer, start: number): number {
  for (let i = start; i < chunk.length; i++) if (!isWhitespace(chunk[i]!)) return i;
  return -1;
}

const hasUtf8Bom = (chunk: Buffer) => chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf;

function countControlBytes(bytes: Buffer): number {
  let count = 0;
  for (const b of bytes) if ((b < 0x20 && !isWhitespace(b) && b !== 0x0c) || b === 0x7f) count++;
  return count;
}

/** Where JSON.parse stopped, from its message ("… at position 42"). */
function parseFailure(error: unknown, text: string): { message: string; offset?: number } {
  const message = error instanceof Error ? error.message : String(error);
  const position = /at position (\d+)/.exec(message);
  if (position) return { message, offset: Number(position[1]) };
  // "Unexpected end of JSON input": where it ended.
  return /end of JSON input/.test(message) ? { message, offset: text.length } : { message };
}

function isPage(value: unknown): value is { items: unknown[] } & Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && Array.isArray((value as { items?: unknown }).items) && !("kind" in value);
}

/** Validates what an EventPage has besides its items (next_page_id, unknown members). */
function checkPageFields(page: Record<string, unknown>, report: (pointer: string, rule: string, message: string, severity: "error" | "warning") => void): void {
  const result = validateEventPage({ ...page, items: [] });
  for (const issue of result.errors) report(issue.pointer, issue.rule, issue.message, "error");
  for (const issue of result.warnings) report(issue.pointer, issue.rule, issue.message, "warning");
}

const DECODE_WINDOW = 96 * 1024;

/** JSONL: one event (or one EventPage) a line; blank lines and CRLF accepted. */
async function readJsonl(chunks: Chunks, context: ReadContext, sink: Sink, limits: ReadLimits): Promise<Format> {
  let lineNumber = 1;
  let carry: Buffer[] = [];
  let carryBytes = 0;
  let skipping = false; // inside a line longer than maxLineBytes
  let stopped = false;
  let events = 0;
  let onlyPages = true;
  // The entry of every valid line: only its value, text and line change.
  const reused: Entry = { value: undefined, text: "", line: 0, column: 1, pointer: "", textPointer: "", bare: true, hasLine: true };

  const line = (raw: string, n: number): boolean => {
    if (raw.length > limits.maxLineBytes) return overlong(n);
    let text = raw;
    if (n === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (text.charCodeAt(text.length - 1) === 13) text = text.slice(0, -1);
    if (text.length === 0) return true;
    const c = text.charCodeAt(0);
    if ((c === 32 || c === 9) && text.trim() === "") return true;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      const failure = parseFailure(error, text);
      events++;
      onlyPages = false;
      return sink({ value: undefined, parseError: failure.message, ...(failure.offset !== undefined && { parseOffset: failure.offset }), text, line: n, column: 1, pointer: "", textPointer: "", bare: true, hasLine: true });
    }
    if (isPage(value)) {
      checkPageFields(value, (pointer, rule, message, severity) => context.issue({ severity, rule, message, pointer, line: n, column: 1, text, textPointer: pointer }));
      const items = value.items;
      for (let i = 0; i < items.length; i++) {
        events++;
        if (!sink({ value: items[i], text, line: n, column: 1, pointer: `/items/${i}`, textPointer: `/items/${i}`, bare: false, hasLine: true })) return false;
      }
      return true;
    }
    events++;
    onlyPages = false;
    reused.value = value;
    reused.text = text;
    reused.line = n;
    return sink(reused);
  };

  const overlong = (n: number): boolean => {
    events++;
    return sink({
      value: undefined,
      parseError: `the line is longer than ${describeSize(limits.maxLineBytes)}: it is not read`,
      text: "",
      line: n,
      column: 1,
      pointer: "",
      textPointer: "",
      bare: true,
      hasLine: true,
    });
  };

  const keep = (piece: Buffer): void => {
    if (skipping) return;
    carry.push(piece);
    carryBytes += piece.length;
    if (carryBytes > limits.maxLineBytes) {
      carry = [];
      carryBytes = 0;
      skipping = true;
      if (!overlong(lineNumber)) stopped = true;
    }
  };

  while (!stopped && !context.stopped()) {
    const chunk = await chunks.next();
    if (!chunk) break;
    let start = 0;
    if (carryBytes > 0 || skipping) {
      const newline = chunk.indexOf(0x0a);
      if (newline < 0) {
        keep(chunk);
        continue;
      }
      if (skipping) {
        skipping = false;
      } else {
        carry.push(chunk.subarray(0, newline));
        const text = Buffer.concat(carry).toString("utf8");
        carry = [];
        carryBytes = 0;
        if (!line(text, lineNumber)) stopped = true;
      }
      lineNumber++;
      start = newline + 1;
    }
    const last = stopped ? -1 : chunk.lastIndexOf(0x0a);
    while (!stopped && last >= start) {
      // Decoded in windows of whole lines under 96 kB: V8 keeps such strings in the young
      // generation, where they die cheaply (a 1 MB string is a large object, collected late).
      // Cutting at a newline byte never splits a UTF-8 character.
      let end = start + DECODE_WINDOW >= last ? last : chunk.lastIndexOf(0x0a, start + DECODE_WINDOW);
      if (end < start) end = chunk.indexOf(0x0a, start + DECODE_WINDOW); // one line longer than the window
      const text = chunk.toString("utf8", start, end);
      let from = 0;
      for (;;) {
        const newline = text.indexOf("\n", from);
        const raw = newline < 0 ? text.slice(from) : text.slice(from, newline);
        if (!line(raw, lineNumber++)) {
          stopped = true;
          break;
        }
        if (newline < 0) break;
        from = newline + 1;
      }
      start = end + 1;
    }
    if (!stopped && start < chunk.length) keep(chunk.subarray(start));
    const pause = context.breathe();
    if (pause) await pause;
  }
  if (!stopped && !context.stopped() && carryBytes > 0) line(Buffer.concat(carry).toString("utf8"), lineNumber);
  if (events > 0 && onlyPages) return "page";
  // One object on one line reads the same as a one-event file: call it what it most likely is.
  return events === 1 && lineNumber <= 2 ? "event" : "jsonl";
}

/** A JSON document: an array of events, an EventPage, or one event. */
async function readDocument(chunks: Chunks, context: ReadContext, sink: Sink, limits: ReadLimits): Promise<Format> {
  const decoder = new StringDecoder("utf8");
  const members: [string, ScannedValue, ScannedValue][] = [];
  const scanner: JsonDocumentScanner = new JsonDocumentScanner(
    {
      element(value, index) {
        const pointer = scanner.isPage ? `/items/${index}` : `/${index}`;
        try {
          return sink({ value: JSON.parse(value.text), text: value.text, line: value.line, column: value.column, pointer, textPointer: "", bare: false, hasLine: true });
        } catch (error) {
          const failure = parseFailure(error, value.text);
          return sink({
            value: undefined,
            parseError: failure.message,
            ...(failure.offset !== undefined && { parseOffset: failure.offset }),
            text: value.text,
            line: value.line,
            column: value.column,
            pointer,
            textPointer: "",
            bare: false,
            hasLine: true,
          });
        }
      },
      member(key, value, name) {
        if (members.length < 1000) members.push([key, value, name]);
      },
    },
    limits.maxValueChars,
  );
  let firstText = true;
  while (!context.stopped()) {
    const chunk = await chunks.next();
    if (!chunk) break;
    let text = decoder.write(chunk);
    if (firstText && text.length > 0) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      firstText = false;
    }
    if (!scanner.write(text)) break;
    const pause = context.breathe();
    if (pause) await pause;
  }
  if (context.stopped()) return scanner.isPage ? "page" : scanner.shape === "array" ? "array" : "event";
  scanner.write(decoder.end());
  scanner.end();
  if (scanner.error) {
    const { message, line, column } = scanner.error;
    // A JSONL file whose first line is longer than the look-ahead reads as one document that goes on.
    const hint = scanner.shape === "object" && message.startsWith("expected nothing after") ? ` (a JSONL file is recognised by a first line shorter than ${describeSize(limits.peekBytes)})` : "";
    context.issue({ severity: "error", rule: "json", message: `is not valid JSON: ${message}${hint}`, line, column });
  }
  if (scanner.shape === "array") return "array";
  if (scanner.isPage) {
    const page: Record<string, unknown> = {};
    const where = new Map<string, { value: ScannedValue; name: ScannedValue }>();
    for (const [key, value, name] of members) {
      try {
        page[key] = JSON.parse(value.text);
        where.set(key, { value, name });
      } catch (error) {
        context.issue({ severity: "error", rule: "json", message: `is not valid JSON: ${parseFailure(error, value.text).message}`, pointer: `/${key}`, line: value.line, column: value.column });
      }
    }
    checkPageFields(page, (pointer, rule, message, severity) => {
      const key = (pointer.split("/")[1] ?? "").replace(/~1/g, "/").replace(/~0/g, "~");
      const member = where.get(key);
      if (!member) {
        context.issue({ severity, rule, message, pointer, line: 1, column: 1 });
      } else if (pointer === `/${pointer.split("/")[1]}`) {
        // The member itself: shown as `"key": value`, from its key.
        const shown = `${member.name.text}: ${member.value.text}`;
        const fragment = fragmentAt(shown, 0, shown.length);
        context.issue({ severity, rule, message, pointer, line: member.name.line, column: member.name.column, ...(fragment && { fragment }) });
      } else {
        context.issue({ severity, rule, message, pointer, line: member.value.line, column: member.value.column, text: member.value.text, textPointer: pointer.slice(pointer.indexOf("/", 1)) });
      }
    });
    return "page";
  }
  const whole = scanner.wholeText();
  if (whole !== undefined && !scanner.error) {
    const text = whole.charCodeAt(0) === 0xfeff ? whole.slice(1) : whole;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      const failure = parseFailure(error, text);
      sink({ value: undefined, parseError: failure.message, ...(failure.offset !== undefined && { parseOffset: failure.offset }), text, line: 1, column: 1, pointer: "", textPointer: "", bare: true, hasLine: true });
      return "event";
    }
    sink({ value, text, line: 1, column: 1, pointer: "", textPointer: "", bare: true, hasLine: true });
  }
  return "event";
}

/**
 * The event files of a reference event directory, in index order, each one event. Gaps and
 * repeats in the indices, and a file name whose id differs from its event's, are errors.
 */
export async function readEventDirectory(
  files: readonly EventFile[],
  odd: readonly string[],
  display: (file: string) => string,
  directoryDisplay: string,
  context: ReadContext,
  sink: Sink,
): Promise<Format> {
  for (const name of odd) {
    context.issue({
      severity: "warning",
      rule: "directory/unrecognised-file",
      message: `${name} is not named event-NNNNN-<id>.json: it is not read as an event of this trajectory`,
      file: directoryDisplay,
    });
  }
  const ahead: Promise<Buffer | Error>[] = [];
  let next = 0;
  const fill = () => {
    while (ahead.length < 8 && next < files.length) ahead.push(readFile(files[next++]!.path).catch((error: Error) => error));
  };
  let expected = 0;
  let previous: EventFile | undefined;
  for (const file of files) {
    if (context.stopped()) break;
    fill();
    const content = await ahead.shift()!;
    const shown = display(file.path);
    if (previous && file.index === previous.index) {
      context.issue({ severity: "error", rule: "directory/duplicate-index", message: `has the same index (${file.index}) as ${previous.name}: the order of the two events is unknown`, file: shown });
    } else if (file.index > expected) {
      const missing = file.index - expected === 1 ? `the event with index ${expected} is missing` : `the events with indices ${expected} to ${file.index - 1} are missing`;
      context.issue({
        severity: "error",
        rule: "directory/index-gap",
        message: `${missing} before this file${previous ? ` (the previous file is ${previous.name})` : " (indices start at 00000)"}: the trajectory is incomplete`,
        file: shown,
      });
    }
    expected = Math.max(expected, file.index + 1);
    previous = file;
    if (content instanceof Error) {
      context.issue({ severity: "error", rule: "input/unreadable", message: `cannot be read: ${content.message}`, file: shown, fatal: true });
      continue;
    }
    context.onBytes(content.length);
    const base = { line: 1, column: 1, pointer: "", textPointer: "", bare: false, file: shown, hasLine: false } as const;
    if (content.subarray(0, 8192).includes(0)) {
      if (!sink({ ...base, value: undefined, parseError: "is a binary file, not JSON", text: "" })) break;
      continue;
    }
    let text = content.toString("utf8");
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (text.trim() === "") {
      if (!sink({ ...base, value: undefined, parseError: "is empty: an event file holds one event", text })) break;
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      const failure = parseFailure(error, text);
      if (!sink({ ...base, value: undefined, parseError: failure.message, ...(failure.offset !== undefined && { parseOffset: failure.offset }), text })) break;
      continue;
    }
    const id = typeof value === "object" && value !== null ? (value as { id?: unknown }).id : undefined;
    if (typeof id === "string" && id !== file.id) {
      context.issue({
        severity: "error",
        rule: "directory/id-mismatch",
        message: `the file name gives the id ${JSON.stringify(file.id)}, the event has ${JSON.stringify(id.slice(0, 80))}`,
        file: shown,
        pointer: "/id",
        line: 1,
        column: 1,
        text,
        textPointer: "/id",
      });
    }
    if (!sink({ ...base, value, text })) break;
  }
  return "directory";
}
