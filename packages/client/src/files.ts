/**
 * Files for `uploadFiles`: what a caller may pass, turned into `File` parts of the multipart field
 * `files`. Browser-safe: reading a path is a hook that only the Node entry installs.
 */

/** Bytes with a name: a Node `Buffer`, a `Uint8Array`, an `ArrayBuffer`, a `Blob` or text. */
export interface NamedData {
  /** The file name sent with the part (the server stores the file under it). */
  name: string;
  data: Blob | ArrayBuffer | ArrayBufferView | string;
  /** Media type of the part; default `application/octet-stream` (or the Blob's own type). */
  type?: string;
}

/**
 * One file to upload, in browsers and Node: a `File` (its own name), a `Blob` (sent with the name
 * `blob`, as `FormData` does; wrap it as `{ name, data }` to name it) or named bytes.
 */
export type UploadInput = Blob | NamedData;

/** In Node, a file can also be given by its path (or `file:` URL), optionally under another name. */
export type NodeUploadInput = UploadInput | string | URL | { path: string | URL; name?: string; type?: string };

/** One file or several (an array, or an array-like such as a browser `FileList`). */
export type UploadFiles<Input> = Input | readonly Input[] | ArrayLike<Input>;

/** Reads a file by path (Node only). */
export type ReadPath = (path: string | URL, name?: string, type?: string) => Promise<File>;

const DEFAULT_TYPE = "application/octet-stream";

function isSingle(value: unknown): boolean {
  return (
    typeof value === "string" ||
    value instanceof Blob ||
    (typeof URL !== "undefined" && value instanceof URL) ||
    (typeof value === "object" && value !== null && ("data" in value || "path" in value))
  );
}

/** The list of inputs of one `uploadFiles` call. */
export function listInputs<Input>(files: UploadFiles<Input>): Input[] {
  if (Array.isArray(files)) return [...(files as Input[])];
  if (isSingle(files)) return [files as Input];
  if (typeof files === "object" && files !== null && typeof (files as ArrayLike<Input>).length === "number") {
    return Array.from(files as ArrayLike<Input>);
  }
  throw new TypeError("uploadFiles: expected a File, a Blob, { name, data }, a path (Node), or a list of them");
}

/** One input as a `File` part. */
export async function toFile(input: unknown, readPath: ReadPath | undefined): Promise<File> {
  if (typeof File !== "undefined" && input instanceof File) return input;
  if (input instanceof Blob) return new File([input], "blob", { type: input.type || DEFAULT_TYPE });
  if (typeof input === "object" && input !== null && "data" in input) {
    const { name, data, type } = input as NamedData;
    if (typeof name !== "string") throw new TypeError("uploadFiles: { name, data } needs a string name");
    const part = ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : data;
    const fallback = data instanceof Blob && data.type ? data.type : DEFAULT_TYPE;
    // A Node Buffer may sit on a SharedArrayBuffer in the types; File copies the bytes either way.
    return new File([part as BlobPart], name, { type: type ?? fallback });
  }
  const isUrl = typeof URL !== "undefined" && input instanceof URL;
  if (typeof input === "string" || isUrl || (typeof input === "object" && input !== null && "path" in input)) {
    if (!readPath) {
      throw new TypeError(
        "uploadFiles: a file path can only be read in Node (the Node entry of @acs-toolkit/client); in a browser pass a File, a Blob or { name, data }",
      );
    }
    if (typeof input === "string" || isUrl) return readPath(input as string | URL);
    const { path, name, type } = input as { path: string | URL; name?: string; type?: string };
    return readPath(path, name, type);
  }
  throw new TypeError(`uploadFiles: cannot upload ${input === null ? "null" : typeof input}; pass a File, a Blob, { name, data } or a path (Node)`);
}
