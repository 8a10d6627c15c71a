/**
 * File operations confined to a workspace that a sandboxed, possibly hostile, process changes at
 * the same time: the file editor runs in the server process, outside the sandbox, so a path
 * checked and then opened again by name could be swapped for a link to a host file in between.
 *
 * Every operation walks the path one component at a time from a descriptor of the workspace,
 * opening each directory relative to its parent's descriptor (`/proc/self/fd/<n>/<name>`, which
 * the kernel resolves as `openat(n, name)`) with `O_NOFOLLOW`. A symbolic link met on the way is
 * read and resolved by this walk, never by the kernel, and only while it stays inside the
 * workspace; `..` pops the walk's own stack. The final component is opened the same way,
 * non-blocking, and checked through its descriptor: only regular files are read or written, so a
 * FIFO, a device or a socket never blocks one of libuv's threads. A swap that lands between two
 * steps either fails the open (`ELOOP`, `ENOTDIR`) or opens something that is still inside.
 */
import { constants, type Dirent } from "node:fs";
import { lstat, mkdir, open, readdir, readlink, rmdir, unlink, type FileHandle } from "node:fs/promises";
import path from "node:path";

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = constants;
/** Links followed in one walk before giving up (Linux's own bound). */
const MAX_LINKS = 40;
/** Times a walk is retried when a component changed under it. */
const RETRIES = 3;

/** A failure the model can act on; its message goes back as the tool's error. */
export class WorkspaceFileError extends Error {
  override readonly name = "WorkspaceFileError";
  constructor(
    message: string,
    readonly reason: "outside" | "missing" | "not_regular" | "not_directory" | "too_large" | "changed" | "exists",
    /** With `too_large`: the file's size in bytes (at least). */
    readonly size?: number,
  ) {
    super(message);
  }
}

/** What a path is, as the walk found it (links inside the workspace followed). */
export interface WorkspaceEntry {
  type: "file" | "directory" | "other";
  size: number;
}

/** One open directory of the walk and the name of the final component in it. */
interface Walked {
  handles: FileHandle[];
  parent: FileHandle;
  /** `""` when the path is the workspace itself. */
  name: string;
  /** The path inside the workspace as resolved (links followed), for messages. */
  resolved: string;
}

const at = (dir: FileHandle, name: string) => `/proc/self/fd/${dir.fd}/${name}`;
const codeOf = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code;

export class WorkspaceFiles {
  /**
   * @param root the workspace (absolute, without links: the server's own directory)
   * @param owner who new files and directories belong to (the sandbox's user), when not the server's
   */
  constructor(
    readonly root: string,
    private readonly owner?: { uid: number; gid: number },
  ) {}

  /** True when `file` is lexically the workspace or inside it. */
  contains(file: string): boolean {
    const relative = path.relative(this.root, path.resolve(file));
    // `..foo` is a child's name, not a way up.
    return relative !== ".." && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative);
  }

  /** What `file` is, or undefined when it does not exist. */
  async lookup(file: string): Promise<WorkspaceEntry | undefined> {
    return this.withWalk(file, false, async ({ parent, name }) => {
      const info = await lstat(name ? at(parent, name) : `/proc/self/fd/${parent.fd}/`).catch((error: unknown) => {
        if (codeOf(error) === "ENOENT" || codeOf(error) === "ENOTDIR") return undefined;
        throw error;
      });
      if (!info) return undefined;
      if (info.isSymbolicLink()) throw new WorkspaceFileError(`The path ${file} changed while it was read.`, "changed");
      return { type: info.isFile() ? "file" : info.isDirectory() ? "directory" : "other", size: info.size };
    });
  }

  /** The bytes of the regular file `file`, at most `maxBytes`. @throws WorkspaceFileError `too_large` (with the size) beyond */
  async read(file: string, maxBytes: number): Promise<Buffer> {
    const tooLarge = (size: number) => new WorkspaceFileError(`File is too large. Maximum allowed size is ${maxBytes / 1024 / 1024}MB.`, "too_large", size);
    return this.withFile(file, O_RDONLY, async (handle, size) => {
      if (size > maxBytes) throw tooLarge(size);
      const chunks: Buffer[] = [];
      let total = 0;
      for (;;) {
        const chunk = Buffer.allocUnsafe(Math.min(1024 * 1024, maxBytes + 1 - total));
        const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
        if (bytesRead === 0) break;
        chunks.push(chunk.subarray(0, bytesRead));
        total += bytesRead;
        if (total > maxBytes) throw tooLarge(total); // it grew while read
      }
      return Buffer.concat(chunks, total);
    });
  }

  /** Replaces the content of the existing regular file `file` (its owner and mode stay). */
  async write(file: string, data: string): Promise<void> {
    await this.withFile(file, O_WRONLY, async (handle) => {
      await handle.truncate(0);
      await handle.write(data, 0, "utf8");
    });
  }

  /** Creates `file` (and its missing parent directories) with `data`; fails when it exists. */
  async create(file: string, data: string): Promise<void> {
    await this.withWalk(file, true, async ({ parent, name }) => {
      if (!name) throw new WorkspaceFileError(`File already exists at: ${file}.`, "exists");
      let handle: FileHandle;
      try {
        handle = await open(at(parent, name), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK, 0o644);
      } catch (error) {
        if (codeOf(error) === "EEXIST") throw new WorkspaceFileError(`File already exists at: ${file}.`, "exists");
        throw error;
      }
      try {
        if (this.owner) await handle.chown(this.owner.uid, this.owner.gid);
        await handle.write(data, 0, "utf8");
      } finally {
        await handle.close();
      }
    });
  }

  /** The path `file` leads to, links followed (inside the workspace): two names of one file give the same. */
  async resolve(file: string): Promise<string> {
    return this.withWalk(file, false, async ({ resolved }) => path.join(this.root, resolved));
  }

  /** The entries of the directory `dir`. */
  async list(dir: string): Promise<Dirent[]> {
    return this.withWalk(dir, false, async ({ parent, name }) => {
      const handle = name ? await this.openDirectory(parent, name, dir) : parent;
      try {
        return await readdir(`/proc/self/fd/${handle.fd}`, { withFileTypes: true });
      } finally {
        if (handle !== parent) await handle.close();
      }
    });
  }

  /** Opens the final component of `file` with `flags`, checks that it is a regular file, and calls `use`. */
  private withFile<T>(file: string, flags: number, use: (handle: FileHandle, size: number) => Promise<T>): Promise<T> {
    return this.withWalk(file, false, async ({ parent, name }) => {
      if (!name) throw new WorkspaceFileError(`The path ${file} is a directory.`, "not_regular");
      let handle: FileHandle;
      try {
        handle = await open(at(parent, name), flags | O_NOFOLLOW | O_NONBLOCK);
      } catch (error) {
        const code = codeOf(error);
        if (code === "ENOENT") throw new WorkspaceFileError(`The path ${file} does not exist.`, "missing");
        if (code === "ELOOP") throw new WorkspaceFileError(`The path ${file} changed while it was opened.`, "changed");
        // A socket (ENXIO), a FIFO without reader (ENXIO), a directory opened for writing (EISDIR).
        if (code === "ENXIO" || code === "EISDIR" || code === "EOPNOTSUPP") throw notRegular(file);
        throw error;
      }
      try {
        const info = await handle.stat();
        if (!info.isFile()) throw notRegular(file);
        return await use(handle, info.size);
      } finally {
        await handle.close();
      }
    });
  }

  /**
   * Walks `file` to the directory holding its final component (links resolved inside the
   * workspace, the final one too when it is a link), calls `use`, and closes every descriptor.
   * With `make`, missing directories on the way are created (for `create`).
   */
  private async withWalk<T>(file: string, make: boolean, use: (walked: Walked) => Promise<T>): Promise<T> {
    if (!this.contains(file)) throw outside(file, this.root);
    for (let attempt = 1; ; attempt++) {
      const walked = await this.walk(file, make);
      try {
        return await use(walked);
      } catch (error) {
        if (!(error instanceof WorkspaceFileError && error.reason === "changed") || attempt === RETRIES) throw error;
      } finally {
        await Promise.all(walked.handles.map((handle) => handle.close().catch(() => {})));
      }
    }
  }

  private async walk(file: string, make: boolean): Promise<Walked> {
    const root = await open(this.root, O_RDONLY | O_DIRECTORY);
    const handles = [root];
    const stack: Array<{ handle: FileHandle; name: string }> = [];
    const current = () => stack.at(-1)?.handle ?? root;
    const resolved = () => stack.map((entry) => entry.name).join("/");
    const pending = path.relative(this.root, path.resolve(file)).split("/").filter((part) => part !== "" && part !== ".");
    let links = 0;
    try {
      while (pending.length > 0) {
        const name = pending.shift()!;
        if (name === "..") {
          if (!stack.pop()) throw outside(file, this.root);
          continue;
        }
        const last = pending.length === 0;
        const info = await lstat(at(current(), name)).catch((error: unknown) => {
          if (codeOf(error) === "ENOENT") return undefined;
          if (codeOf(error) === "ENOTDIR") throw new WorkspaceFileError(`The path ${file} does not exist.`, "missing");
          throw error;
        });
        if (info?.isSymbolicLink()) {
          if (++links > MAX_LINKS) throw new WorkspaceFileError(`The path ${file} has too many levels of symbolic links.`, "changed");
          const target = await readlink(at(current(), name));
          if (path.isAbsolute(target)) {
            if (!this.contains(target)) throw outside(file, this.root);
            stack.length = 0;
            pending.unshift(...path.relative(this.root, path.resolve(target)).split("/").filter((part) => part !== "" && part !== "."));
          } else {
            pending.unshift(...target.split("/").filter((part) => part !== "" && part !== "."));
          }
          continue;
        }
        if (last) return { handles, parent: current(), name, resolved: [resolved(), name].filter(Boolean).join("/") };
        if (!info) {
          if (!make) throw new WorkspaceFileError(`The path ${file} does not exist.`, "missing");
          await mkdir(at(current(), name), { mode: 0o755 }).catch((error: unknown) => {
            if (codeOf(error) !== "EEXIST") throw error;
          });
        }
        const handle = await this.openDirectory(current(), name, file);
        handles.push(handle);
        if (!info && this.owner) await handle.chown(this.owner.uid, this.owner.gid);
        stack.push({ handle, name });
      }
      const top = current();
      return { handles, parent: top, name: "", resolved: resolved() };
    } catch (error) {
      await Promise.all(handles.map((handle) => handle.close().catch(() => {})));
      throw error;
    }
  }

  private async openDirectory(parent: FileHandle, name: string, file: string): Promise<FileHandle> {
    try {
      return await open(at(parent, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK);
    } catch (error) {
      const code = codeOf(error);
      if (code === "ELOOP") throw new WorkspaceFileError(`The path ${file} changed while it was opened.`, "changed");
      if (code === "ENOTDIR") throw new WorkspaceFileError(`The path ${file} is not a directory.`, "not_directory");
      if (code === "ENOENT") throw new WorkspaceFileError(`The path ${file} does not exist.`, "missing");
      throw error;
    }
  }
}

function outside(file: string, root: string): WorkspaceFileError {
  return new WorkspaceFileError(`The path ${file} is outside the workspace ${root}; the file editor only works inside the workspace.`, "outside");
}

function notRegular(file: string): WorkspaceFileError {
  return new WorkspaceFileError(`The path ${file} is not a regular file (a FIFO, socket or device): the file editor only works on regular files.`, "not_regular");
}

/**
 * Removes the directory `dir` and everything in it without ever following a link, even while a
 * process swaps what is inside for links meanwhile (Node's `rm -r` reads a folder by name after it
 * checked it, and could be sent into a host folder by a swap). Each folder is opened with
 * `O_NOFOLLOW` and emptied through its descriptor; what cannot be opened as a folder is unlinked.
 * Nothing to remove is not an error. Folders deeper than 256 levels (one descriptor open per
 * level) are refused with an error, as is a folder that another process keeps filling.
 */
export async function removeTree(dir: string): Promise<void> {
  let handle: FileHandle;
  try {
    handle = await open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (error) {
    if (codeOf(error) === "ENOENT") return;
    if (codeOf(error) === "ELOOP" || codeOf(error) === "ENOTDIR") return unlink(dir);
    throw error;
  }
  try {
    await emptyDirectory(handle, 1);
  } finally {
    await handle.close();
  }
  await rmdir(dir).catch((error: unknown) => {
    if (codeOf(error) !== "ENOENT") throw error;
  });
}

/** Levels of folders {@link removeTree} descends (each holds a descriptor open). */
const MAX_DEPTH = 256;

async function emptyDirectory(dir: FileHandle, depth: number): Promise<void> {
  if (depth > MAX_DEPTH) throw new Error(`more than ${MAX_DEPTH} levels of folders: not removed`);
  for (const name of await readdir(`/proc/self/fd/${dir.fd}`)) {
    const child = at(dir, name);
    let sub: FileHandle | undefined;
    try {
      sub = await open(child, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK);
    } catch (error) {
      const code = codeOf(error);
      if (code === "ENOENT") continue;
      if (code !== "ELOOP" && code !== "ENOTDIR") throw error;
    }
    if (sub) {
      try {
        await emptyDirectory(sub, depth + 1);
      } finally {
        await sub.close();
      }
      await rmdir(child).catch((error: unknown) => {
        if (codeOf(error) !== "ENOENT") throw error;
      });
    } else {
      await unlink(child).catch((error: unknown) => {
        if (codeOf(error) !== "ENOENT") throw error;
      });
    }
  }
}
