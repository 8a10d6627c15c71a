/**
 * A conversation's files kept in memory (the browser mock's workspace): the same admission as the
 * server's disk (upload-admission.ts: limits, name rules, duplicates ignoring case, nothing
 * overwritten), the multipart body read by the platform's `Response.formData()`. The body is
 * gathered whole before it is parsed, so a body past `maxRequestBytes` skips every file of the
 * request as `request_too_large` (the disk receiver skips from the file where the limit is passed;
 * a page holds the body whole anyway).
 */
import type { ConversationFiles, ReceivedFiles } from "./deps.js";
import { checkLimits, DEFAULT_UPLOAD_LIMITS, DUPLICATE_DETAIL, fileTooLargeDetail, isMultipartFormData, skippedFile, UploadAdmission, type UploadLimits } from "../upload-admission.js";
import { foldedName, sanitizeFileName } from "../upload-names.js";
import { RequestValidationError } from "../core/errors.js";

interface StoredFile {
  name: string;
  bytes: Uint8Array;
}

/** A body that is not a usable multipart form, as the disk receiver's 422. */
const unusableForm = (msg: string) => new RequestValidationError([{ loc: ["body"], msg, type: "value_error" }]);

/** Files in memory, per conversation, under `limits` (default: the server's). */
export function memoryFiles(limits: UploadLimits = DEFAULT_UPLOAD_LIMITS): ConversationFiles {
  checkLimits(limits);
  /** Per conversation: stored files by their folded name. */
  const folders = new Map<string, Map<string, StoredFile>>();
  const folderOf = (id: string) => folders.get(id) ?? folders.set(id, new Map()).get(id)!;

  return {
    async receive(conversationId, body, headers) {
      const type = headers["content-type"];
      if (!isMultipartFormData(type)) {
        body.discard();
        throw unusableForm("The request body must be multipart/form-data.");
      }
      const admission = new UploadAdmission(limits);
      const parts: Uint8Array[] = [];
      let size = 0;
      for await (const chunk of body.chunks(["multipart/form-data"])) {
        size += chunk.length;
        parts.push(chunk);
      }
      admission.tooLarge = size > limits.maxRequestBytes;
      let form: FormData;
      try {
        form = await new Response(new Blob(parts as BlobPart[]), { headers: { "content-type": type! } }).formData();
      } catch (error) {
        throw unusableForm(`The multipart body is malformed: ${(error as Error).message}.`);
      }
      const folder = folderOf(conversationId);
      const received: ReceivedFiles = { sawField: false, stored: [], skipped: [] };
      for (const value of form.getAll("files")) {
        if (typeof value === "string") continue; // a text part is not a file
        received.sawField = true;
        const outcome = admission.admit(value.name);
        if (outcome === undefined) continue;
        if ("skipped" in outcome) received.skipped.push(outcome.skipped);
        // Size first: the disk receiver hears of a small body's size before its name check answers.
        else if (value.size > limits.maxFileBytes) received.skipped.push(skippedFile(value.name, "file_too_large", fileTooLargeDetail(limits)));
        else if (folder.has(foldedName(outcome.name))) received.skipped.push(skippedFile(value.name, "duplicate_name", DUPLICATE_DETAIL));
        else {
          folder.set(foldedName(outcome.name), { name: outcome.name, bytes: new Uint8Array(await value.arrayBuffer()) });
          received.stored.push({ name: outcome.name });
        }
      }
      return received;
    },

    async remove(conversationId) {
      folders.delete(conversationId);
    },

    async open(conversationId, name) {
      const checked = sanitizeFileName(name);
      if (!checked.ok) return undefined;
      const file = folders.get(conversationId)?.get(foldedName(checked.name));
      // The disk's names are case-sensitive: a download names the file as it was stored.
      if (!file || file.name !== checked.name) return undefined;
      const { bytes } = file;
      return {
        size: bytes.length,
        async *chunks() {
          yield bytes;
        },
        cancel() {},
      };
    },
  };
}
