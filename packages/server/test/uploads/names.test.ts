import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStoredFile } from "../../src/upload-folders.js";
import { sanitizeFileName, TEMP_FILE_PREFIX, type SkipReason } from "../../src/upload-names.js";
import { DEFAULT_UPLOAD_LIMITS } from "../../src/upload-admission.js";
import { makeTempDir, removeDir } from "./harness.js";

const rejected: Array<[string, SkipReason]> = [
  ["../x", "path_traversal"],
  ["a/../../b", "path_traversal"],
  ["..", "path_traversal"],
  ["x/..", "path_traversal"],
  ["..\\x", "path_traversal"],
  ["a\\..\\..\\b", "path_traversal"],
  ["/etc/passwd", "absolute_path"],
  ["/", "absolute_path"],
  ["C:\\x", "absolute_path"],
  ["c:x", "absolute_path"],
  ["\\\\server\\share", "absolute_path"],
  ["//server/share", "absolute_path"],
  ["\\x", "absolute_path"],
  ["", "empty_name"],
  ["   ", "empty_name"],
  ["\t\n", "empty_name"],
  ["\u00a0\u3000", "empty_name"],
  ["docs/readme.md", "invalid_name"],
  ["docs\\readme.md", "invalid_name"],
  ["./x", "invalid_name"],
  ["\u0000x", "invalid_name"],
  ["x\ny", "invalid_name"],
  ["x\ry", "invalid_name"],
  ["tab\there", "invalid_name"],
  ["del\u007f", "invalid_name"],
  ["c1\u0085", "invalid_name"],
  ["evil\u202Egpj.exe", "invalid_name"],
  ["lone\ud800", "invalid_name"],
  [".", "invalid_name"],
  ["...", "invalid_name"],
  ["name.", "invalid_name"],
  ["name ", "invalid_name"],
  ["notes:draft", "invalid_name"],
  ["a:b", "absolute_path"],
  ["what?.txt", "invalid_name"],
  ["a*b", "invalid_name"],
  ["a|b", "invalid_name"],
  ['a"b', "invalid_name"],
  ["a<b>", "invalid_name"],
  ["CON", "invalid_name"],
  ["con.txt", "invalid_name"],
  ["Nul.tar.gz", "invalid_name"],
  ["COM1", "invalid_name"],
  ["lpt9.log", "invalid_name"],
  ["CONOUT$", "invalid_name"],
  ["a".repeat(256), "invalid_name"],
  ["é".repeat(128), "invalid_name"], // 256 bytes in UTF-8
  [`${TEMP_FILE_PREFIX}0123.part`, "invalid_name"],
  // Invisible and format characters: two names that look alike are one name.
  ["zero\u200Bwidth.txt", "invalid_name"],
  ["\uFEFFbom.txt", "invalid_name"],
  ["no\u00A0break.txt", "invalid_name"],
  ["trailing\u3000", "invalid_name"],
  ["ideographic\u3000space.txt", "invalid_name"],
  ["soft\u00ADhyphen.txt", "invalid_name"],
  ["word\u2060joiner.txt", "invalid_name"],
  ["joiner\u200D.txt", "invalid_name"],
  ["mark\u200F.txt", "invalid_name"],
  ["line\u2028separator.txt", "invalid_name"],
  ["hangul\u3164filler.txt", "invalid_name"],
  ["thin\u2009space.txt", "invalid_name"],
  ["nonchar\uFFFE.txt", "invalid_name"],
  // What a decoder makes of bytes that are not UTF-8: two different names would become one.
  ["broken\uFFFD.txt", "invalid_name"],
];

const accepted: Array<[string, string]> = [
  ["report.csv", "report.csv"],
  ["résumé.pdf", "résumé.pdf"],
  ["re\u0301sume\u0301.pdf", "résumé.pdf"], // NFD in, NFC out
  ["数据.csv", "数据.csv"],
  [".env", ".env"],
  ["..hidden", "..hidden"],
  ["a..b", "a..b"],
  [" leading space.txt", " leading space.txt"],
  ["with space.txt", "with space.txt"],
  ["a∕b", "a∕b"], // U+2215 is not a separator on any file system
  ["console.log", "console.log"],
  ["COM10", "COM10"],
  ["a".repeat(255), "a".repeat(255)],
  ["é".repeat(127), "é".repeat(127)], // 254 bytes
  ["😀.png", "😀.png"],
  ["日本語 ファイル.txt", "日本語 ファイル.txt"],
  ["Ünïcödé-Straße.txt", "Ünïcödé-Straße.txt"],
];

describe("sanitizeFileName", () => {
  it.each(rejected)("rejects %j as %s", (raw, reason) => {
    const result = sanitizeFileName(raw);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.reason).toBe(reason);
      expect(result.detail).toMatch(/^[A-Z].*\.$/u);
    }
  });

  it.each(accepted)("accepts %j as %j", (raw, name) => {
    expect(sanitizeFileName(raw)).toEqual({ ok: true, name });
  });

  it("uses the spec's sentence for traversal", () => {
    expect(sanitizeFileName("../etc/passwd")).toEqual({
      ok: false,
      reason: "path_traversal",
      detail: "The name leaves the upload folder.",
    });
  });

  it("has the documented default limits", () => {
    expect(DEFAULT_UPLOAD_LIMITS).toEqual({
      maxFileBytes: 25 * 1024 * 1024,
      maxFiles: 100,
      maxRequestBytes: 250 * 1024 * 1024,
    });
  });
});

describe("openStoredFile", () => {
  let root: string;
  let dir: string;

  beforeAll(async () => {
    root = await makeTempDir();
    dir = join(root, "uploads");
    await mkdir(join(dir, "folder"), { recursive: true });
    await writeFile(join(dir, "report.csv"), "a,b\n1,2\n");
    await writeFile(join(dir, "résumé.pdf"), "pdf");
    await writeFile(join(root, "secret.txt"), "secret");
    await symlink(join(root, "secret.txt"), join(dir, "link.txt"));
  });

  afterAll(async () => {
    await removeDir(root);
  });

  /** The name the open handle reads, its size, and the handle closed. */
  const opened = async (folder: string, name: string) => {
    const file = await openStoredFile(folder, name);
    if (!file) return undefined;
    const content = await file.handle.readFile("utf8");
    await file.handle.close();
    return { content, size: file.size };
  };

  it("opens a stored file with its size", async () => {
    expect(await opened(dir, "report.csv")).toEqual({ content: "a,b\n1,2\n", size: 8 });
  });

  it("finds an NFC-stored name asked for in NFD", async () => {
    expect((await opened(dir, "re\u0301sume\u0301.pdf"))?.content).toBe("pdf");
  });

  it.each(["../secret.txt", "..", "/etc/passwd", "folder", "link.txt", "missing.txt", "", "folder/../report.csv"])(
    "refuses %j",
    async (name) => {
      expect(await openStoredFile(dir, name)).toBeUndefined();
    },
  );

  it("answers undefined for a folder that does not exist", async () => {
    expect(await openStoredFile(join(root, "nope"), "report.csv")).toBeUndefined();
  });
});
