/** A conversation's files on disk (`<data dir>/uploads/<id>/`): uploads streamed in, downloads read out. */
import { createReadStream } from "node:fs";
import { rm } from "node:fs/promises";
import type { IncomingMessage } from "node:http";
import { Readable } from "node:stream";
import path from "node:path";
import type { ConversationFiles } from "../api/deps.js";
import { RequestValidationError } from "../validation/request-validators.js";
import { openStoredFile, UploadFolders } from "../upload-folders.js";
import type { UploadLimits } from "../upload-admission.js";
import { receiveUploads, UploadRequestError } from "../uploads.js";
import { NodeRequestBody } from "./node-body.js";

export function diskFiles({ dataDir, limits, owner }: { dataDir: string; limits: UploadLimits; owner?: { uid: number; gid: number } }): ConversationFiles {
  const folders = new UploadFolders();
  const conversationDir = (id: string) => path.join(dataDir, "uploads", id);
  return {
    async receive(conversationId, body, headers) {
      // A Node request is read as it arrives; another host's body (an in-process call) as a stream
      // of its bytes with the request's headers.
      const request = body instanceof NodeRequestBody ? body.request : (Object.assign(Readable.from(body.chunks(["multipart/form-data"])), { headers }) as unknown as IncomingMessage);
      try {
        return await receiveUploads(request, { dir: conversationDir(conversationId), limits, folders, owner });
      } catch (error) {
        if (error instanceof UploadRequestError) throw new RequestValidationError([{ loc: ["body"], msg: error.detail, type: "value_error" }]);
        throw error;
      }
    },
    // After the uploads in progress into the folder (UploadFolders): none writes into it afterwards.
    remove: (conversationId) => folders.exclusive(conversationDir(conversationId), () => rm(conversationDir(conversationId), { recursive: true, force: true })),
    async open(conversationId, name) {
      const file = await openStoredFile(conversationDir(conversationId), name);
      if (!file) return undefined;
      // The open file is read, whatever happens to its name; exactly the bytes announced (an
      // agent's file may grow while it is read); the stream closes the handle either way.
      const stream = createReadStream("", { fd: file.handle, start: 0, end: Math.max(0, file.size - 1) });
      return { size: file.size, chunks: () => stream, cancel: () => void stream.destroy() };
    },
  };
}
