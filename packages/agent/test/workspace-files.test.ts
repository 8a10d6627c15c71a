import { execFileSync } from "node:child_process";
import { once } from "node:events";
import { closeSync, constants, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeTree, WorkspaceFileError, WorkspaceFiles, type WorkspaceEntry } from "../src/tools/workspace-files.js";

/** The workspace root of the current test (no links in it). */
let ws: string;
/** A sibling of the workspace whose name starts with the workspace's: a prefix check would let it in. */
let outside: string;
let files: WorkspaceFiles;
/** FIFOs made by the current test, opened from both ends in afterEach to release a blocked open. */
let fifos: string[];

const inWs = (...parts: string[]) => path.join(ws, ...parts);

beforeEach(() => {
  ws = realpathSync(mkdtempSync(path.join(tmpdir(), "acs-wsf-")));
  outside = `${ws}-out`;
  mkdirSync(outside);
  writeFileSync(path.join(outside, "secret.txt"), "host secret");
  files = new WorkspaceFiles(ws);
  fifos = [];
});

afterEach(() => {
  for (const fifo of fifos) unblock(fifo);
  rmSync(ws, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

/** Wakes an open of `fifo` blocked for want of a partner (a reader wakes a writer and the other way round). */
function unblock(fifo: string): void {
  for (const flags of [constants.O_RDONLY, constants.O_WRONLY]) {
    try {
      closeSync(openSync(fifo, flags | constants.O_NONBLOCK));
    } catch {
      // No partner waiting, or already removed.
    }
  }
}

function mkfifo(file: string): string {
  execFileSync("mkfifo", [file]);
  fifos.push(file);
  return file;
}

/** Rejects when `promise` has not settled within `ms`: a blocking open never settles. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`did not settle within ${ms} ms (blocked in open?)`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/** The WorkspaceFileError `promise` rejects with; anything else fails the test. */
async function failure(promise: Promise<unknown>): Promise<WorkspaceFileError> {
  let result: unknown;
  try {
    result = await promise;
  } catch (error) {
    if (error instanceof WorkspaceFileError) return error;
    throw error;
  }
  throw new Error(`expected a WorkspaceFileError, got ${JSON.stringify(result)}`);
}

const reasonOf = async (promise: Promise<unknown>) => (await failure(promise)).reason;

describe("contains (lexical)", () => {
  it.each<{ name: string; file: () => string; inside: boolean }>([
    { name: "the workspace itself", file: () => ws, inside: true },
    { name: "the workspace with a trailing slash", file: () => `${ws}/`, inside: true },
    { name: "a nested path", file: () => inWs("a", "b.txt"), inside: true },
    { name: "a path whose .. stays inside", file: () => `${ws}/a/../b.txt`, inside: true },
    { name: "a path leaving and re-entering by name", file: () => `${ws}/../${path.basename(ws)}/x`, inside: true },
    { name: "the parent", file: () => `${ws}/..`, inside: false },
    { name: "a .. above the root", file: () => `${ws}/a/../../x`, inside: false },
    { name: "a sibling sharing the name as prefix", file: () => `${outside}/secret.txt`, inside: false },
    { name: "an unrelated absolute path", file: () => "/etc/passwd", inside: false },
    { name: "the filesystem root", file: () => "/", inside: false },
  ])("$name → $inside", ({ file, inside }) => {
    expect(files.contains(file())).toBe(inside);
  });

  // A child whose name merely starts with ".." is inside, not a climb out.
  it.each(["..foo", "..."])("a child named %s is inside", async (name) => {
    writeFileSync(inWs(name), "bytes");
    expect(files.contains(inWs(name))).toBe(true);
    expect((await files.read(inWs(name), 1024)).toString()).toBe("bytes");
  });
});

describe("lookup", () => {
  beforeEach(() => {
    mkdirSync(inWs("dir"));
    writeFileSync(inWs("dir", "file.txt"), "hello");
  });

  it.each<{ name: string; file: () => string; entry?: Partial<WorkspaceEntry> | undefined; reasons?: WorkspaceFileError["reason"][] }>([
    { name: "a file", file: () => inWs("dir", "file.txt"), entry: { type: "file", size: 5 } },
    { name: "a directory", file: () => inWs("dir"), entry: { type: "directory" } },
    { name: "the workspace itself", file: () => ws, entry: { type: "directory" } },
    { name: "the workspace with a trailing slash", file: () => `${ws}/`, entry: { type: "directory" } },
    { name: "a missing name", file: () => inWs("dir", "nope"), entry: undefined },
    { name: "a name under a missing directory", file: () => inWs("nope", "x"), reasons: ["missing"] },
    // The file editor takes either reason as "does not exist".
    { name: "a name under a regular file", file: () => inWs("dir", "file.txt", "x"), reasons: ["missing", "not_directory"] },
    { name: "a deeper name under a regular file", file: () => inWs("dir", "file.txt", "x", "y"), reasons: ["missing", "not_directory"] },
  ])("$name", async ({ file, entry, reasons }) => {
    if (reasons) {
      expect(reasons).toContain(await reasonOf(files.lookup(file())));
    } else if (entry) {
      expect(await files.lookup(file())).toMatchObject(entry);
    } else {
      expect(await files.lookup(file())).toBeUndefined();
    }
  });

  it("reports a FIFO as other, without opening it", async () => {
    mkfifo(inWs("pipe"));
    expect(await within(files.lookup(inWs("pipe")), 2000)).toMatchObject({ type: "other" });
  }, 5000);
});

describe("links", () => {
  beforeEach(() => {
    mkdirSync(inWs("dir", "sub"), { recursive: true });
    writeFileSync(inWs("dir", "target.txt"), "target bytes");
    writeFileSync(inWs("top.txt"), "top bytes");
  });

  describe("inside the workspace are followed", () => {
    it.each<{ name: string; setup: () => void; file: string; bytes: string }>([
      { name: "a relative link to a file", setup: () => symlinkSync("dir/target.txt", inWs("rel")), file: "rel", bytes: "target bytes" },
      { name: "a relative link with .. that stays inside", setup: () => symlinkSync("../../top.txt", inWs("dir", "sub", "up")), file: "dir/sub/up", bytes: "top bytes" },
      { name: "an absolute link to a file inside", setup: () => symlinkSync(inWs("dir", "target.txt"), inWs("abs")), file: "abs", bytes: "target bytes" },
      {
        name: "a chain of relative and absolute links",
        setup: () => {
          symlinkSync("c2", inWs("c1"));
          symlinkSync(inWs("dir", "c3"), inWs("c2"));
          symlinkSync("target.txt", inWs("dir", "c3"));
        },
        file: "c1",
        bytes: "target bytes",
      },
      { name: "a link to a directory inside as an intermediate component", setup: () => symlinkSync("dir", inWs("dl")), file: "dl/target.txt", bytes: "target bytes" },
      {
        name: "a .. after a linked directory, resolved from the link's target",
        // Kernel semantics: dl/sub/.. is dir, not the workspace; only lexical .. in the given path is normalised first.
        setup: () => {
          symlinkSync("dir/sub", inWs("dl"));
          symlinkSync("../target.txt", inWs("dir", "sub", "back"));
        },
        file: "dl/back",
        bytes: "target bytes",
      },
      { name: "an absolute link to the workspace itself", setup: () => symlinkSync(ws, inWs("dir", "home")), file: "dir/home/top.txt", bytes: "top bytes" },
    ])("$name", async ({ setup, file, bytes }) => {
      setup();
      const full = inWs(...file.split("/"));
      expect((await files.read(full, 1024)).toString()).toBe(bytes);
      expect(await files.lookup(full)).toMatchObject({ type: "file", size: bytes.length });
      await files.write(full, "changed");
      expect(readFileSync(full, "utf8")).toBe("changed");
    });

    it("lists a directory through a link", async () => {
      symlinkSync("dir", inWs("dl"));
      expect((await files.list(inWs("dl"))).map((entry) => entry.name).sort()).toEqual(["sub", "target.txt"]);
      expect(await files.lookup(inWs("dl"))).toMatchObject({ type: "directory" });
    });
  });

  describe("leading outside are refused", () => {
    const cases: Array<{ name: string; setup: () => void; file: () => string }> = [
      { name: "an absolute link to a file outside", setup: () => symlinkSync(path.join(outside, "secret.txt"), inWs("abs-out")), file: () => inWs("abs-out") },
      {
        name: "a relative link climbing out with ../..",
        setup: () => symlinkSync(`../../${path.basename(outside)}/secret.txt`, inWs("dir", "rel-out")),
        file: () => inWs("dir", "rel-out"),
      },
      { name: "an absolute link to a directory outside, as an intermediate", setup: () => symlinkSync(outside, inWs("dir-out")), file: () => inWs("dir-out", "secret.txt") },
      { name: "an absolute link to a directory outside, as the final component", setup: () => symlinkSync(outside, inWs("dir-out")), file: () => inWs("dir-out") },
      { name: "a relative link to the workspace's parent, as an intermediate", setup: () => symlinkSync("..", inWs("up")), file: () => inWs("up", path.basename(outside), "secret.txt") },
      { name: "an absolute link to the filesystem root", setup: () => symlinkSync("/", inWs("slash")), file: () => inWs("slash", "etc", "passwd") },
      { name: "an absolute link whose target climbs out lexically", setup: () => symlinkSync(`${ws}/dir/../../${path.basename(outside)}/secret.txt`, inWs("sneaky")), file: () => inWs("sneaky") },
      {
        name: "an inside link chained to an outside one",
        setup: () => {
          symlinkSync("dir/hop", inWs("first"));
          symlinkSync(path.join(outside, "secret.txt"), inWs("dir", "hop"));
        },
        file: () => inWs("first"),
      },
      { name: "a lexical .. above the root", setup: () => {}, file: () => `${ws}/../${path.basename(outside)}/secret.txt` },
    ];
    const operations: Array<{ op: string; run: (file: string) => Promise<unknown> }> = [
      { op: "read", run: (file) => files.read(file, 1024) },
      { op: "write", run: (file) => files.write(file, "overwritten") },
      { op: "lookup", run: (file) => files.lookup(file) },
      { op: "list", run: (file) => files.list(file) },
      { op: "create", run: (file) => files.create(file, "created") },
    ];

    it.each(cases.flatMap((c) => operations.map((o) => ({ ...c, ...o }))))("$op: $name", async ({ setup, file, run }) => {
      setup();
      const error = await failure(run(file()));
      expect(error.reason).toBe("outside");
      expect(error.message).toContain("outside the workspace");
      expect(readFileSync(path.join(outside, "secret.txt"), "utf8")).toBe("host secret");
    });

    it.each([
      { name: "an intermediate link to a directory outside", setup: () => symlinkSync(outside, inWs("dir-out")), file: () => inWs("dir-out", "new", "deep.txt"), made: "new" },
      { name: "a dangling absolute link to outside", setup: () => symlinkSync(path.join(outside, "new.txt"), inWs("dangle")), file: () => inWs("dangle"), made: "new.txt" },
      {
        name: "a dangling relative link to outside",
        setup: () => symlinkSync(`../${path.basename(outside)}/new.txt`, inWs("dangle")),
        file: () => inWs("dangle"),
        made: "new.txt",
      },
    ])("create through $name creates nothing outside", async ({ setup, file, made }) => {
      setup();
      expect(await reasonOf(files.create(file(), "created"))).toBe("outside");
      expect(existsSync(path.join(outside, made))).toBe(false);
    });
  });

  it.each<{ name: string; setup: () => void; file: () => string }>([
    { name: "a link to itself", setup: () => symlinkSync("loop", inWs("loop")), file: () => inWs("loop") },
    {
      name: "two links to each other",
      setup: () => {
        symlinkSync("other", inWs("loop"));
        symlinkSync(inWs("loop"), inWs("other"));
      },
      file: () => inWs("loop"),
    },
    // Not a loop, but more links in one path than the kernel's bound of 40.
    { name: "a link to its own directory taken 41 times", setup: () => symlinkSync(".", inWs("dir", "again")), file: () => inWs("dir", ...Array<string>(41).fill("again"), "target.txt") },
  ])("refuses $name with too many levels", async ({ setup, file }) => {
    setup();
    for (const run of [() => files.read(file(), 1024), () => files.lookup(file()), () => files.list(file()), () => files.write(file(), "x")]) {
      const error = await failure(run());
      expect(error.reason).toBe("changed");
      expect(error.message).toMatch(/too many levels/);
    }
  });

  it("follows a link to its own directory 40 times", async () => {
    symlinkSync(".", inWs("dir", "again"));
    expect((await files.read(inWs("dir", ...Array<string>(40).fill("again"), "target.txt"), 1024)).toString()).toBe("target bytes");
  });
});

describe("FIFOs and sockets are refused without blocking", () => {
  it("read of a FIFO", async () => {
    const fifo = mkfifo(inWs("pipe"));
    expect(await reasonOf(within(files.read(fifo, 1024), 2000))).toBe("not_regular");
  }, 5000);

  it("write to a FIFO", async () => {
    const fifo = mkfifo(inWs("pipe"));
    expect(await reasonOf(within(files.write(fifo, "data"), 2000))).toBe("not_regular");
  }, 5000);

  it("write to a FIFO that has a reader", async () => {
    const fifo = mkfifo(inWs("pipe"));
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      expect(await reasonOf(within(files.write(fifo, "data"), 2000))).toBe("not_regular");
    } finally {
      closeSync(reader);
    }
  }, 5000);

  it("read of a FIFO reached through a link", async () => {
    mkfifo(inWs("pipe"));
    symlinkSync("pipe", inWs("to-pipe"));
    expect(await reasonOf(within(files.read(inWs("to-pipe"), 1024), 2000))).toBe("not_regular");
  }, 5000);

  it("read of and write to a unix socket", async () => {
    const socket = inWs("sock");
    const server = createServer();
    server.listen(socket);
    await once(server, "listening");
    try {
      expect(await reasonOf(within(files.read(socket, 1024), 2000))).toBe("not_regular");
      expect(await reasonOf(within(files.write(socket, "data"), 2000))).toBe("not_regular");
      expect(await files.lookup(socket)).toMatchObject({ type: "other" });
    } finally {
      server.close();
      await once(server, "close");
    }
  }, 5000);
});

describe("read", () => {
  beforeEach(() => {
    mkdirSync(inWs("dir"));
    writeFileSync(inWs("ten.txt"), "0123456789");
    writeFileSync(inWs("big.bin"), Buffer.alloc(3 * 1024 * 1024 + 1, 1));
  });

  it.each<{ name: string; file: string; maxBytes: number; bytes?: number; reason?: WorkspaceFileError["reason"] }>([
    { name: "a file of exactly maxBytes", file: "ten.txt", maxBytes: 10, bytes: 10 },
    { name: "a file one byte over maxBytes", file: "ten.txt", maxBytes: 9, reason: "too_large" },
    { name: "a file over maxBytes, across read chunks", file: "big.bin", maxBytes: 3 * 1024 * 1024, reason: "too_large" },
    { name: "a file under maxBytes, across read chunks", file: "big.bin", maxBytes: 4 * 1024 * 1024, bytes: 3 * 1024 * 1024 + 1 },
    { name: "a missing file", file: "nope.txt", maxBytes: 10, reason: "missing" },
    { name: "a directory", file: "dir", maxBytes: 10, reason: "not_regular" },
    { name: "the workspace itself", file: "", maxBytes: 10, reason: "not_regular" },
  ])("$name", async ({ file, maxBytes, bytes, reason }) => {
    const full = inWs(file);
    if (reason) {
      expect(await reasonOf(files.read(full, maxBytes))).toBe(reason);
    } else {
      const read = await files.read(full, maxBytes);
      expect(read.length).toBe(bytes);
      expect(read.equals(readFileSync(full))).toBe(true);
    }
  });
});

describe("write", () => {
  it("replaces the content and keeps the file's mode and inode", async () => {
    const file = inWs("script.sh");
    writeFileSync(file, "a much longer original content\n", { mode: 0o750 });
    const before = statSync(file);
    await files.write(file, "short\n");
    const after = statSync(file);
    expect(readFileSync(file, "utf8")).toBe("short\n");
    expect(after.mode & 0o7777).toBe(0o750);
    expect(after.ino).toBe(before.ino);
  });

  it.each<{ name: string; file: string; reason: WorkspaceFileError["reason"] }>([
    { name: "a missing file (write does not create)", file: "nope.txt", reason: "missing" },
    { name: "a directory", file: "dir", reason: "not_regular" },
    { name: "the workspace itself", file: "", reason: "not_regular" },
  ])("refuses $name", async ({ file, reason }) => {
    mkdirSync(inWs("dir"));
    expect(await reasonOf(files.write(inWs(file), "x"))).toBe(reason);
    expect(existsSync(inWs("nope.txt"))).toBe(false);
  });
});

describe("create", () => {
  it("creates the file and its missing parent directories", async () => {
    await files.create(inWs("a", "b", "c.txt"), "content");
    expect(readFileSync(inWs("a", "b", "c.txt"), "utf8")).toBe("content");
    expect(statSync(inWs("a", "b")).isDirectory()).toBe(true);
  });

  it("creates through a dangling link inside", async () => {
    symlinkSync("real/new.txt", inWs("alias"));
    await files.create(inWs("alias"), "via link");
    expect(readFileSync(inWs("real", "new.txt"), "utf8")).toBe("via link");
  });

  it.each<{ name: string; setup: () => void; file: string }>([
    { name: "an existing file", setup: () => writeFileSync(inWs("f.txt"), "old"), file: "f.txt" },
    { name: "an existing directory", setup: () => mkdirSync(inWs("d")), file: "d" },
    { name: "the workspace itself", setup: () => {}, file: "" },
    {
      name: "a link to an existing file inside",
      setup: () => {
        writeFileSync(inWs("f.txt"), "old");
        symlinkSync("f.txt", inWs("l"));
      },
      file: "l",
    },
  ])("refuses $name with exists", async ({ setup, file }) => {
    setup();
    expect(await reasonOf(files.create(inWs(file), "new"))).toBe("exists");
    if (existsSync(inWs("f.txt"))) expect(readFileSync(inWs("f.txt"), "utf8")).toBe("old");
  });

  it("gives the created file and directories to the owner, not the existing ones", async () => {
    const owner = { uid: 65534, gid: 65534 };
    mkdirSync(inWs("pre"));
    await new WorkspaceFiles(ws, owner).create(inWs("pre", "a", "b", "f.txt"), "owned");
    expect(readFileSync(inWs("pre", "a", "b", "f.txt"), "utf8")).toBe("owned");
    // Changing ownership needs root.
    if (process.getuid?.() === 0) {
      for (const made of [["pre", "a"], ["pre", "a", "b"], ["pre", "a", "b", "f.txt"]]) {
        expect(statSync(inWs(...made))).toMatchObject(owner);
      }
      expect(statSync(inWs("pre")).uid).toBe(0);
    }
  });
});

describe("list", () => {
  it("returns the entries of a directory with their types", async () => {
    mkdirSync(inWs("d", "inner"), { recursive: true });
    writeFileSync(inWs("d", "f.txt"), "");
    writeFileSync(inWs("d", ".hidden"), "");
    symlinkSync("f.txt", inWs("d", "l"));
    const entries = await files.list(inWs("d"));
    const summary = entries.map((entry) => [entry.name, entry.isDirectory() ? "dir" : entry.isSymbolicLink() ? "link" : "file"]).sort();
    expect(summary).toEqual([
      [".hidden", "file"],
      ["f.txt", "file"],
      ["inner", "dir"],
      ["l", "link"],
    ]);
  });

  it("lists the workspace itself", async () => {
    writeFileSync(inWs("top.txt"), "");
    expect((await files.list(ws)).map((entry) => entry.name)).toEqual(["top.txt"]);
  });

  it.each<{ name: string; file: string; reason: WorkspaceFileError["reason"] }>([
    { name: "a regular file", file: "f.txt", reason: "not_directory" },
    { name: "a missing directory", file: "nope", reason: "missing" },
  ])("refuses $name", async ({ file, reason }) => {
    writeFileSync(inWs("f.txt"), "");
    expect(await reasonOf(files.list(inWs(file)))).toBe(reason);
  });
});

describe("removeTree", () => {
  it("removes a tree of folders, files, FIFOs and links without following a link out", async () => {
    const outsideDir = mkdtempSync(path.join(tmpdir(), "acs-wsf-keep-"));
    try {
      writeFileSync(path.join(outsideDir, "keep.txt"), "keep");
      const tree = inWs("tree");
      mkdirSync(path.join(tree, "a", "b"), { recursive: true });
      writeFileSync(path.join(tree, "a", "b", "f.txt"), "x");
      execFileSync("mkfifo", [path.join(tree, "a", "fifo")]);
      symlinkSync(outsideDir, path.join(tree, "a", "out"));
      symlinkSync(path.join(outsideDir, "keep.txt"), path.join(tree, "file-out"));
      await removeTree(tree);
      expect(existsSync(tree)).toBe(false);
      expect(readFileSync(path.join(outsideDir, "keep.txt"), "utf8")).toBe("keep");
      // A link given as the tree itself is removed, not followed.
      symlinkSync(outsideDir, inWs("link-tree"));
      await removeTree(inWs("link-tree"));
      expect(existsSync(path.join(outsideDir, "keep.txt"))).toBe(true);
      await removeTree(inWs("missing"));
    } finally {
      rmSync(outsideDir, { recursive: true, force: true });
    }
  });
});
