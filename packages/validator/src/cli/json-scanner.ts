/**
 * Splits a JSON document into the texts of its events as it streams in, so that an array or an
 * EventPage of any size is read with flat memory: the elements of a top-level array, or the `items`
 * of a top-level object, come out one by one with the line and column where each starts. Other
 * members of a top-level object come out as texts too; an object without an `items` array is kept
 * whole (one event, bounded by `maxValueChars`).
 *
 * It tracks only the structure (brackets outside strings); each element's text is then parsed by
 * JSON.parse, which reports what is wrong inside one element without stopping the scan.
 */

/** A JSON value's text and where it starts in the document (1-based line and column). */
export interface ScannedValue {
  text: string;
  line: number;
  column: number;
}

interface ScannerHandlers {
  /** An element of the top-level array or of the page's `items`; return false to stop. */
  element(value: ScannedValue, index: number): boolean | void;
  /** A member of the top-level object, other than the `items` array; `name` is the key's text and place. */
  member?(key: string, value: ScannedValue, name: ScannedValue): void;
}

/** Where the structure broke: the scan stops there. */
interface ScanError {
  message: string;
  line: number;
  column: number;
}

const enum Mode {
  Start,
  ValueOrEnd, // after "[" of the array being streamed
  Value, // after ","
  CommaOrEnd, // after an element
  KeyOrEnd, // after "{"
  Key, // after "," in the object
  Colon,
  MemberValue,
  MemberCommaOrEnd,
  Done,
}

const enum Capture {
  Key,
  Element,
  Member,
}

const enum Kind {
  String,
  Container,
  Literal,
}

export class JsonDocumentScanner {
  /** "array" or "object" once the first character is read. */
  shape: "array" | "object" | undefined;
  /** True once the top-level object has an `items` array: an EventPage. */
  isPage = false;
  error: ScanError | undefined;
  /** Elements streamed so far. */
  elements = 0;

  private mode = Mode.Start;
  private stopped = false;
  private inItems = false;
  private key = "";
  /** Line number and absolute offset of the start of the current line. */
  private line = 1;
  private lineStart = 0;
  /** Characters before the current chunk. */
  private base = 0;

  private capturing = false;
  private capture = Capture.Element;
  private kind = Kind.Literal;
  private depth = 0;
  private inString = false;
  /** Backslashes at the end of the previous chunk, inside a string. */
  private trailingBackslashes = 0;
  private pieces: string[] = [];
  private captured = 0;
  private captureStart = 0;
  private captureLine = 1;
  private captureColumn = 1;
  /** The text and place of the current member's key. */
  private keyValue: ScannedValue = { text: "", line: 1, column: 1 };

  /** The whole text of a top-level object, kept until it turns out to be a page. */
  private whole: string[] | undefined = [];
  private wholeLength = 0;

  constructor(
    private readonly handlers: ScannerHandlers,
    /** The largest element, member or non-page object accepted (characters). */
    private readonly maxValueChars = 256 * 1024 * 1024,
  ) {}

  /** The text of a top-level object that is not a page, once the scan has ended. */
  wholeText(): string | undefined {
    return this.shape === "object" && !this.isPage && this.whole ? this.whole.join("") : undefined;
  }

  /** Scans the next chunk; false once the scan has stopped (an error, or a handler said so). */
  write(chunk: string): boolean {
    if (this.stopped) return false;
    if (this.whole) {
      this.whole.push(chunk);
      this.wholeLength += chunk.length;
      if (this.shape === "object" && this.wholeLength > this.maxValueChars) {
        return this.fail(`the JSON object is larger than ${describeSize(this.maxValueChars)} and is not an EventPage: it is not read`, this.line, 1);
      }
    }
    const n = chunk.length;
    let j = 0;
    while (j < n && !this.stopped) {
      if (this.capturing) {
        j = this.continueCapture(chunk, j);
        continue;
      }
      const c = chunk.charCodeAt(j);
      if (c === 10) {
        this.line++;
        this.lineStart = this.base + j + 1;
        j++;
        continue;
      }
      if (c === 32 || c === 9 || c === 13) {
        j++;
        continue;
      }
      switch (this.mode) {
        case Mode.Start:
          if (c === 91) {
            this.shape = "array";
            this.whole = undefined;
            this.mode = Mode.ValueOrEnd;
          } else if (c === 123) {
            this.shape = "object";
            this.mode = Mode.KeyOrEnd;
          } else {
            this.unexpected(chunk, j, "[ or {");
          }
          j++;
          break;
        case Mode.ValueOrEnd:
          if (c === 93) {
            this.closeArray();
            j++;
            break;
          }
          j = this.startCapture(chunk, j, Capture.Element);
          break;
        case Mode.Value:
          if (c === 93) {
            this.fail(`a "]" follows a ",": element ${this.elements} is missing`, this.line, this.column(j));
            break;
          }
          j = this.startCapture(chunk, j, Capture.Element);
          break;
        case Mode.CommaOrEnd:
          if (c === 44) this.mode = Mode.Value;
          else if (c === 93) this.closeArray();
          else this.unexpected(chunk, j, `"," or "]" after element ${this.elements - 1}`);
          j++;
          break;
        case Mode.KeyOrEnd:
          if (c === 125) {
            this.mode = Mode.Done;
            j++;
            break;
          }
          j = this.startKey(chunk, j);
          break;
        case Mode.Key:
          j = this.startKey(chunk, j);
          break;
        case Mode.Colon:
          if (c === 58) this.mode = Mode.MemberValue;
          else this.unexpected(chunk, j, `":" after the key ${JSON.stringify(this.key)}`);
          j++;
          break;
        case Mode.MemberValue:
          if (c === 91 && this.key === "items" && !this.isPage) {
            this.isPage = true;
            this.inItems = true;
            this.whole = undefined;
            this.mode = Mode.ValueOrEnd;
            j++;
            break;
          }
          j = this.startCapture(chunk, j, Capture.Member);
          break;
        case Mode.MemberCommaOrEnd:
          if (c === 44) this.mode = Mode.Key;
          else if (c === 125) this.mode = Mode.Done;
          else this.unexpected(chunk, j, `"," or "}" after the member ${JSON.stringify(this.key)}`);
          j++;
          break;
        case Mode.Done:
          this.unexpected(chunk, j, `nothing after the end of the JSON ${this.shape}`);
          j++;
          break;
      }
    }
    if (this.capturing && !this.stopped) this.keepPiece(chunk, n);
    this.base += n;
    return !this.stopped;
  }

  /** Ends the scan: an error when the document is not complete. */
  end(): void {
    if (this.stopped) return;
    if (this.mode === Mode.Done && !this.capturing) return;
    const where = this.shape === "array" || this.inItems ? `${this.inItems ? "the items array" : "the JSON array"}` : "the JSON object";
    if (this.capturing && this.capture === Capture.Element) {
      this.fail(`the input ends inside element ${this.elements} of ${where} (it starts at line ${this.captureLine}): the file is truncated`, this.line, this.column(0));
    } else {
      this.fail(`the input ends before the end of ${where}: the file is truncated`, this.line, this.column(0));
    }
  }

  private closeArray(): void {
    if (this.inItems) {
      this.inItems = false;
      this.mode = Mode.MemberCommaOrEnd;
    } else {
      this.mode = Mode.Done;
    }
  }

  private startKey(chunk: string, j: number): number {
    if (chunk.charCodeAt(j) !== 34) {
      this.unexpected(chunk, j, "a member name in double quotes");
      return j + 1;
    }
    return this.startCapture(chunk, j, Capture.Key);
  }

  private startCapture(chunk: string, j: number, capture: Capture): number {
    this.capturing = true;
    this.capture = capture;
    this.pieces = [];
    this.captured = 0;
    this.captureStart = j;
    this.captureLine = this.line;
    this.captureColumn = this.column(j);
    this.trailingBackslashes = 0;
    const c = chunk.charCodeAt(j);
    if (c === 34) {
      this.kind = Kind.String;
      this.inString = true;
      return j + 1;
    }
    if (c === 123 || c === 91) {
      this.kind = Kind.Container;
      this.depth = 1;
      this.inString = false;
      return j + 1;
    }
    if (c === 125 || c === 93 || c === 44 || c === 58) {
      this.capturing = false;
      this.unexpected(chunk, j, capture === Capture.Element ? `element ${this.elements}` : "a value");
      return j + 1;
    }
    this.kind = Kind.Literal;
    this.inString = false;
    return j;
  }

  /** Scans the captured value from `j`; returns where scanning goes on. */
  private continueCapture(chunk: string, j: number): number {
    const n = chunk.length;
    for (;;) {
      if (this.inString) {
        const quote = chunk.indexOf('"', j);
        if (quote < 0) {
          let run = 0;
          while (run < n - j && chunk.charCodeAt(n - 1 - run) === 92) run++;
          this.trailingBackslashes = run === n ? this.trailingBackslashes + run : run;
          return n;
        }
        let backslashes = 0;
        while (quote - 1 - backslashes >= 0 && chunk.charCodeAt(quote - 1 - backslashes) === 92) backslashes++;
        if (backslashes === quote) backslashes += this.trailingBackslashes; // the run goes back into the previous chunk
        this.trailingBackslashes = 0;
        j = quote + 1;
        if (backslashes % 2 === 1) continue; // an escaped quote
        this.inString = false;
        if (this.kind === Kind.String) return this.finish(chunk, j);
        continue;
      }
      if (this.kind === Kind.Container) {
        for (; j < n; j++) {
          const c = chunk.charCodeAt(j);
          if (c === 34) {
            this.inString = true;
            j++;
            break;
          }
          if (c === 123 || c === 91) this.depth++;
          else if (c === 125 || c === 93) {
            if (--this.depth === 0) return this.finish(chunk, j + 1);
          } else if (c === 10) {
            this.line++;
            this.lineStart = this.base + j + 1;
          }
        }
        if (j >= n) return n;
        continue;
      }
      // A number or a literal ends at a delimiter, which is not part of it.
      for (; j < n; j++) {
        const c = chunk.charCodeAt(j);
        if (c === 44 || c === 93 || c === 125 || c === 32 || c === 10 || c === 13 || c === 9) return this.finish(chunk, j);
      }
      return n;
    }
  }

  private keepPiece(chunk: string, end: number): void {
    const piece = chunk.slice(this.captureStart, end);
    this.pieces.push(piece);
    this.captured += piece.length;
    this.captureStart = 0;
    if (this.captured > this.maxValueChars) {
      this.fail(`element ${this.elements} is larger than ${describeSize(this.maxValueChars)}: it is not read`, this.captureLine, this.captureColumn);
    }
  }

  private finish(chunk: string, end: number): number {
    const last = chunk.slice(this.captureStart, end);
    const text = this.pieces.length === 0 ? last : this.pieces.join("") + last;
    this.pieces = [];
    this.capturing = false;
    const value: ScannedValue = { text, line: this.captureLine, column: this.captureColumn };
    switch (this.capture) {
      case Capture.Key:
        this.keyValue = value;
        try {
          this.key = text.includes("\\") ? (JSON.parse(text) as string) : text.slice(1, -1);
        } catch {
          this.fail(`the member name ${text.slice(0, 60)} is not a valid JSON string`, value.line, value.column);
        }
        this.mode = Mode.Colon;
        break;
      case Capture.Element:
        this.mode = Mode.CommaOrEnd;
        if (this.handlers.element(value, this.elements++) === false) this.stopped = true;
        break;
      case Capture.Member:
        this.mode = Mode.MemberCommaOrEnd;
        this.handlers.member?.(this.key, value, this.keyValue);
        break;
    }
    return end;
  }

  private column(j: number): number {
    return this.base + j - this.lineStart + 1;
  }

  private unexpected(chunk: string, j: number, expected: string): void {
    const got = chunk.slice(j, j + 12);
    this.fail(`expected ${expected}, got ${JSON.stringify(got)}`, this.line, this.column(j));
  }

  private fail(message: string, line: number, column: number): false {
    if (!this.stopped) this.error = { message, line, column };
    this.stopped = true;
    this.capturing = false;
    return false;
  }
}

export function describeSize(bytes: number): string {
  if (bytes >= 1024 * 1024 * 1024) return `${+(bytes / (1024 * 1024 * 1024)).toFixed(1)} GB`;
  if (bytes >= 1024 * 1024) return `${+(bytes / (1024 * 1024)).toFixed(1)} MB`;
  if (bytes >= 1024) return `${+(bytes / 1024).toFixed(1)} kB`;
  return `${bytes} bytes`;
}
